/* ident.c - identity, syscall and code frames of a trace's stacks (ident.h). */
#include <stdlib.h>
#include <string.h>

#include "user/events/ident.h"
#include "user/stacks/idents.h"

/* A name as the thread has it: without the '_' the recorder puts before one the 1.23 viewer
 * would hide (user/stacks/idents.h). */
static void copy_name(char *dst, const char *src, size_t len)
{
	if (len && src != idents__unguard(src)) {
		src++;
		len--;
	}
	if (len > IDENT_NAME_MAX)
		len = IDENT_NAME_MAX;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static bool is_program(const struct gt_rframe *f)
{
	return !strcmp(f->file, "program");
}

bool ident__program(const struct gt_stack *s, struct ident *out)
{
	if (!s || !s->n || !is_program(&s->frames[s->n - 1]))
		return false;
	copy_name(out->prog, s->frames[s->n - 1].func, strlen(s->frames[s->n - 1].func));
	return true;
}

bool ident__of_stack(const struct gt_stack *s, struct ident *out)
{
	const struct gt_rframe *proc;
	const char *suffix;
	char *end;
	unsigned long pid;

	if (!s || s->n < 2 || !is_program(&s->frames[s->n - 1]))
		return false;
	proc = &s->frames[s->n - 2];
	if (strncmp(proc->file, "pid ", 4))
		return false;
	pid = strtoul(proc->file + 4, &end, 10);
	if (*end || !pid || pid > UINT32_MAX)
		return false;
	/* "COMM (pid PID)": the comm is what comes before the last " (pid ". */
	suffix = strstr(proc->func, " (pid ");
	for (const char *next = suffix; next; next = strstr(next + 1, " (pid "))
		suffix = next;
	if (!suffix)
		return false;
	out->pid = (uint32_t)pid;
	copy_name(out->comm, proc->func, (size_t)(suffix - proc->func));
	copy_name(out->prog, s->frames[s->n - 1].func, strlen(s->frames[s->n - 1].func));
	return true;
}

const char *ident__syscall(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strcmp(s->frames[i].file, "kernel") &&
		    !strncmp(s->frames[i].func, "syscall ", 8))
			return s->frames[i].func + 8;
	return NULL;
}

const char *ident__special(const struct gt_stack *s)
{
	if (!s || s->n != 1 || strcmp(s->frames[0].file, "lxtrace"))
		return NULL;
	return s->frames[0].func;
}

