/* usdt_files.c - finds the programs and libraries that carry lxtrace annotation probes.
 *
 * A USDT probe is an ELF note in section .note.stapsdt (type NT_STAPSDT, owner "stapsdt"):
 * three addresses (the probe, the .stapsdt.base section, the semaphore), each of the file's
 * word size, then the provider, the probe name and the argument spec as C strings. libbpf
 * reads the same notes when it attaches, but has no call to ask which providers a file has;
 * reading the notes here keeps libbpf from parsing every library of a process five times (one
 * attach per probe name) only to find nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "lib/grow.h"
#include "user/proc/mapped_file.h"
#include "user/proc/procmaps.h"
#include "user/target/usdt_files.h"

#define PREFIX "lxtrace record: "
#define NT_STAPSDT 3
#define PROVIDER "lxtrace"

/* Every file looked at, so that a library many target processes map is read once. */
struct usdt_file {
	dev_t dev;
	ino_t ino;
	char *path;		/* NULL: no probes */
};

struct usdt_files {
	struct usdt_file *v;
	size_t n, cap;
	size_t nattach;		/* files with a path */
};

struct usdt_files *usdt_files__new(void)
{
	return calloc(1, sizeof(struct usdt_files));
}

/* Whether one of the notes in data is an lxtrace probe. */
static bool lxtrace_note(Elf_Data *data, size_t addr_size)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		const char *desc = (const char *)data->d_buf + desc_off;

		off = next;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != sizeof("stapsdt") ||
		    memcmp(name, "stapsdt", sizeof("stapsdt")) || nh.n_descsz < 3 * addr_size)
			continue;
		if (nh.n_descsz - 3 * addr_size >= sizeof(PROVIDER) &&
		    !memcmp(desc + 3 * addr_size, PROVIDER, sizeof(PROVIDER)))
			return true;
	}
	return false;
}

/* Whether the ELF file open at fd has an lxtrace probe. Anything unreadable has none. */
static bool has_probes(int fd)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, addr_size;
	bool found = false;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return false;
	addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		found = data && lxtrace_note(data, addr_size);
	}
out:
	elf_end(elf);
	return found;
}

static bool contains(const struct usdt_files *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
			return true;
	return false;
}

/* Notes the file st, to be attached by path (NULL: it has no probes). */
static int push(struct usdt_files *s, const struct stat *st, const char *path)
{
	char *copy = NULL;

	if (grow_array((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v), 8))
		goto nomem;
	if (path && !(copy = strdup(path)))
		goto nomem;
	s->v[s->n++] = (struct usdt_file){ st->st_dev, st->st_ino, copy };
	s->nattach += copy != NULL;
	return 0;
nomem:
	fprintf(stderr, PREFIX "out of memory\n");
	return -ENOMEM;
}

int usdt_files__add(struct usdt_files *s, const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		int err = -errno;

		fprintf(stderr, PREFIX "--usdt %s: %s\n", path, strerror(-err));
		return err;
	}
	return contains(s, &st) ? 0 : push(s, &st, path);
}

/* Adds the file named path (the command's program, which the user chose) if it carries
 * lxtrace probes, opened as a file another user may control (lib/foreign_file.h: a regular
 * file, and the open cannot wait on a FIFO). Anything else has no probes. */
static int add_if_annotated(struct usdt_files *s, const char *path)
{
	const struct foreign_rules rules = { .sz = sizeof(rules), .follow = true,
					     .owner = FOREIGN_ANY_OWNER };
	struct stat st;
	int fd = foreign_file__open(AT_FDCWD, path, &rules, &st), err = 0;

	if (fd < 0)
		return 0;
	if (!contains(s, &st))
		err = push(s, &st, has_probes(fd) ? path : NULL);
	close(fd);
	return err;
}

int usdt_files__add_annotated(struct usdt_files *s, const char *path)
{
	return add_if_annotated(s, path);
}

/* A path naming the file of mapping e of pid for this process: its own when that is still the
 * mapped file (libbpf, attaching to a pid without BPF cookies, finds the file in the pid's maps
 * by that path), else the process's map_files link (deleted, replaced, other mount namespace). */
static void mapped_path(pid_t pid, const struct procmaps_entry *e, char *buf, size_t len)
{
	struct stat st;

	if (!e->deleted && !stat(e->name, &st) && st.st_dev == e->dev && st.st_ino == e->ino)
		snprintf(buf, len, "%s", e->name);
	else
		snprintf(buf, len, "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)e->start, (unsigned long long)e->end);
}

/* Adds the file of mapping e of pid if it carries lxtrace probes. The file is opened and
 * checked in the file worker (user/proc/mapped_file.h): one not on a local filesystem, whose
 * server may stall any read of it, gets no probes, as libbpf and the kernel's uprobes would
 * read it here, in place (and its path is not even looked at). */
static int add_mapped(struct usdt_files *s, pid_t pid, const struct procmaps_entry *e)
{
	const struct mapped_file f = { "/proc", pid, e->start, e->end, e->name, e->dev, e->ino };
	struct stat st = { .st_dev = e->dev, .st_ino = e->ino };
	char path[4200];
	bool local, probes;
	int fd;

	if (contains(s, &st))
		return 0;
	fd = mapped_file__open(&f, &local);
	if (fd < 0)
		return 0;
	probes = has_probes(fd);
	close(fd);
	if (probes && !local)
		fprintf(stderr, PREFIX "%s: annotation probes not attached: not on a local "
			"filesystem\n", e->name);
	if (probes && local)
		mapped_path(pid, e, path, sizeof(path));
	return push(s, &st, probes && local ? path : NULL);
}

int usdt_files__add_process(struct usdt_files *s, pid_t pid)
{
	char path[64], *line = NULL;
	size_t lcap = 0;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		err = errno == ENOENT ? -ESRCH : -errno;
		if (err != -ESRCH)
			fprintf(stderr, PREFIX "process %d: reading its mappings: %s\n", (int)pid,
				strerror(-err));
		return err;
	}
	while (!err && getline(&line, &lcap, f) > 0) {
		struct procmaps_entry e;

		if (procmaps__parse_exec(line, &e) && e.ino && e.name[0] == '/')
			err = add_mapped(s, pid, &e);
	}
	free(line);
	fclose(f);
	return err;
}

size_t usdt_files__count(const struct usdt_files *s)
{
	return s->nattach;
}

const char *usdt_files__path(const struct usdt_files *s, size_t i)
{
	for (size_t k = 0; k < s->n; k++)
		if (s->v[k].path && !i--)
			return s->v[k].path;
	return NULL;
}

void usdt_files__free(struct usdt_files *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	free(s);
}
