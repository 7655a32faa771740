/* sym_kernel.c - a sorted table of kallsyms text symbols, searched by address. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/stacks/sym_kernel.h"
#include "user/stacks/sym_search.h"

/* kallsyms has no sizes: a symbol is taken to end where the next one starts. Past the last
 * symbol of a region that would stretch over unmapped space, so an address further than
 * this from its symbol is not attributed to it. No kernel function comes near 1 MiB. */
#define MAX_FUNC_SIZE (1u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offsets into sym_kernel.names */
	uint32_t module;	/* 0 = kernel image */
};

struct sym_kernel {
	struct ksym *syms;
	size_t n, cap;
	char *names;		/* NUL-separated; offset 0 is "" */
	size_t names_len, names_cap;
};

static int add_name(struct sym_kernel *k, const char *s, size_t len, uint32_t *out)
{
	if (grow_array((void **)&k->names, &k->names_cap, k->names_len + len + 1, 1, 1 << 20))
		return -ENOMEM;
	if (k->names_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	memcpy(k->names + k->names_len, s, len);
	k->names[k->names_len + len] = '\0';
	*out = (uint32_t)k->names_len;
	k->names_len += len + 1;
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Same address: the entry read first (smaller name offset) wins, deterministically. */
	return x->name < y->name ? -1 : x->name > y->name;
}

/* One line: "ADDR TYPE NAME[\t[MODULE]]". Modules repeat on thousands of lines, so the last
 * one's offset is reused. */
static int parse_line(struct sym_kernel *k, char *line, uint32_t *last_mod, bool *nonzero)
{
	char *type, *name, *mod, *end;
	struct ksym *sym;
	uint64_t addr;
	int err;

	addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	type = end + 1;
	if (!strchr("tTwW", *type) || type[1] != ' ')
		return 0;
	name = type + 2;
	name[strcspn(name, "\n")] = '\0';
	mod = strchr(name, '\t');
	if (mod)
		*mod++ = '\0';
	if (addr)
		*nonzero = true;
	if (grow_array((void **)&k->syms, &k->cap, k->n + 1, sizeof(*k->syms), 65536))
		return -ENOMEM;
	sym = &k->syms[k->n];
	sym->addr = addr;
	sym->module = 0;
	if (mod && *mod == '[') {
		size_t len = strcspn(mod + 1, "]");

		if (*last_mod && strlen(k->names + *last_mod) == len &&
		    !memcmp(k->names + *last_mod, mod + 1, len)) {
			sym->module = *last_mod;
		} else {
			err = add_name(k, mod + 1, len, &sym->module);
			if (err)
				return err;
			*last_mod = sym->module;
		}
	}
	err = add_name(k, name, strlen(name), &sym->name);
	if (err)
		return err;
	k->n++;
	return 0;
}

struct sym_kernel *sym_kernel__load(const char *path)
{
	struct sym_kernel *k = calloc(1, sizeof(*k));
	uint32_t last_mod = 0, empty;
	bool nonzero = false;
	char *line = NULL;
	size_t cap = 0;
	FILE *f = NULL;
	int err = 0;

	if (!k)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		goto fail;
	}
	err = add_name(k, "", 0, &empty);
	while (!err && getline(&line, &cap, f) > 0)
		err = parse_line(k, line, &last_mod, &nonzero);
	if (!err && ferror(f))
		err = -EIO;
	if (!err && !k->n)
		err = -ENODATA;
	if (!err && !nonzero)
		err = -EPERM;
	if (err)
		goto fail;
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_addr);
	free(line);
	fclose(f);
	return k;
fail:
	free(line);
	if (f)
		fclose(f);
	sym_kernel__free(k);
	errno = -err;
	return NULL;
}

const char *sym_kernel__find(const struct sym_kernel *k, uint64_t addr, const char **module)
{
	size_t lo = sym_search__upto(k->syms, k->n, sizeof(*k->syms), offsetof(struct ksym, addr),
				     addr);
	const struct ksym *sym;

	/* The last symbol at or below addr; among equal addresses the first read. */
	if (!lo)
		return NULL;
	sym = &k->syms[lo - 1];
	while (sym > k->syms && sym[-1].addr == sym->addr)
		sym--;
	if (addr - sym->addr >= MAX_FUNC_SIZE)
		return NULL;
	*module = sym->module ? k->names + sym->module : NULL;
	return k->names + sym->name;
}

size_t sym_kernel__count(const struct sym_kernel *k)
{
	return k->n;
}

void sym_kernel__free(struct sym_kernel *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}
