/* symbolize.h - turns kernel and user code addresses into trace frames {pc, func, file, line}.
 *
 * Kernel addresses resolve through /proc/kallsyms, user addresses through the ELF files a
 * process maps (libdwfl: symbols, DWARF lines, inlined calls, separate debug files) or its
 * perf map (/tmp/perf-PID.map) for JIT code. See docs/symbolize.md.
 *
 * Lifetime: symbolizer__note_process() snapshots a process's executable mappings and opens
 * each file it has not seen yet, so its addresses still resolve after it exits (or execs,
 * or its files are deleted), until symbolizer__forget_process(). Files are cached per binary
 * (device and inode), shared by every process that maps them, and their DWARF is read on
 * first use only.
 *
 * PCs: a trace maps each PC to one frame for the whole file, so the PCs handed out are
 * one-to-one with frames for the symbolizer's life:
 *  - the innermost frame of an address keeps the address looked up (addr, or addr - 1 for a
 *    return address), as `addr2line` would resolve it;
 *  - each caller frame of an inlined call gets SYM_PC_SYNTHETIC | depth << 47 | address
 *    (depth 1 = the function the innermost one is inlined into);
 *  - when another frame holds that PC already (the same address in two processes running
 *    different code), a PC in SYM_PC_SYNTHETIC | SYM_PC_REMAPPED | hash is handed out instead;
 *    also when a claim on it was forgotten (claims unused for long are: pcclaims.h).
 * The same (pid, address) therefore always gives the same frames; the PC may move once after
 * a long time unused. The ranges of PCs each maker of frames keeps to: format/pcs.h.
 *
 * Not thread-safe: one symbolizer is used by one thread.
 */
#ifndef LXTRACE_USER_SYMBOLIZE_H
#define LXTRACE_USER_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/pcs.h"

struct foreign_log;

#define SYM_PC_SYNTHETIC GT_PC_SYMBOLIZER
#define SYM_PC_REMAPPED GT_PC_SYMBOLIZER_REMAPPED
/* A process snapshot is named by a 64-bit `proc`: its pid in the low 32 bits, and above them
 * anything that tells successive images of one pid apart (e.g. an exec generation), so the
 * stacks of an image still resolve after the pid has exec'ed or been reused. A bare pid is a
 * proc too. */
#define SYM_PROC(pid, gen) ((uint64_t)(uint32_t)(pid) | (uint64_t)(gen) << 32)
#define SYM_PROC_PID(proc) ((pid_t)(uint32_t)(proc))

/* One frame, ready for struct gt_frame. Strings are owned by the symbolizer and stay valid
 * until symbolizer__free(). */
struct sym_frame {
	uint64_t pc;
	const char *func;
	const char *file;
	uint64_t line;		/* 0 when unknown */
	/* JIT code not named yet: an address in anonymous memory (or none) that the process's
	 * perf map did not name when looked up; symbolizer__user only. The map may name it
	 * later (symbolizer__late_jit). */
	bool late_jit;
};

struct symbolizer_opts {
	size_t sz;			/* sizeof(struct symbolizer_opts), for growth */
	const char *proc_root;		/* NULL: "/proc" */
	const char *kallsyms;		/* NULL: "/proc/kallsyms" */
	const char *perfmap_dir;	/* NULL: "/tmp" (perf-PID.map) */
	const char *debuginfo_path;	/* NULL: SYM_ELF_DEBUG_ROOT, "/usr/lib/debug" */
	/* Besides root, the user whose binaries are read without a budget (the one who gets the
	 * trace: SUDO_UID); 0 or (uid_t)-1 for none. */
	uid_t trusted_uid;
	/* What the open binaries (their symbols, and libdw's DWARF of the CUs lookups met) may
	 * hold in all before the least recently used are closed; 0: 32 MiB. */
	uint64_t elf_budget;
};

struct symbolizer_stats {
	uint64_t processes;		/* noted and not forgotten */
	uint64_t processes_swept;	/* forgotten without an exit record: found gone */
	uint64_t modules;		/* distinct binaries opened */
	uint64_t modules_failed;	/* binaries that could not be opened or parsed */
	uint64_t modules_retried;	/* opens tried again after a failure */
	uint64_t modules_closed;	/* ELFs closed: no lookup having asked for them for a
					 * while, or the least recently used past the budget */
	uint64_t modules_over_budget;	/* of them, closed past the budget */
	uint64_t modules_reread;	/* of them, read again when asked for */
	uint64_t modules_read_late;	/* binaries read after their open was late: a stack
					 * made before of their addresses reads otherwise now */
	uint64_t lookups;		/* user addresses resolved */
	uint64_t cache_hits;		/* of which answered from a binary's cache */
	uint64_t unknown;		/* frames that read "[unknown] ..." */
	uint64_t unknown_held;		/* distinct such frames held now: two generations, not
					 * the whole file's (sym_unknowns.h) */
	uint64_t remapped;		/* PCs moved because another frame had (or may have had)
					 * them: pcclaims.h */
	uint64_t maps_reads;		/* /proc/PID/maps reads */
	uint64_t files_refused;		/* perf maps and binaries refused by the rules of
					 * lib/foreign_file.h (a link, a FIFO, someone else's...) */
	uint64_t prepared;		/* binaries read ahead by symbolizer__prepare */
	uint64_t prepared_dwarf;	/* of which with their DWARF */
	uint64_t prepared_kernel;	/* 1: kallsyms was read ahead */
	uint64_t prepare_ns;		/* time symbolizer__prepare took */
};

/* How many refused files symbolizer__refused names; the rest are only counted. */
#define SYM_REFUSED_NAMED 8

/* opts may be NULL. NULL with errno set. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);

/* Snapshots the executable mappings of proc's pid under proc, replacing any earlier snapshot
 * of proc (call it when a process is first seen and after each exec, with a new proc per
 * image to keep the old image's snapshot too), and opens the files not cached yet. Returns 0,
 * or -ENOENT/-ESRCH when the process is gone (an earlier snapshot of proc is then kept), or
 * another -errno. A file that cannot be opened is not an error: its addresses read
 * "[unknown] FILE+0xOFFSET". */
int symbolizer__note_process(struct symbolizer *s, uint64_t proc);

/* A mapping of code, as the kernel reports it when it is made (bpf/lxtrace.h, LX_REC_MMAP). */
struct sym_mapping {
	uint64_t start, end;
	uint64_t pgoff;		/* in bytes */
	uint64_t dev, ino;	/* the file's st_dev (makedev) and inode; ino 0: not a file */
	const char *path;	/* where to find the file if the process is gone ("" unknown),
				 * or the special mapping's name ("[vdso]") when ino is 0 */
	pid_t pid;		/* the process that mapped it, for /proc/PID/map_files */
};

/* Opens the file of m now, unless cached already: call it as soon as the mapping is known,
 * while the process may still run. A file that could not be opened is tried again at the next
 * call. 0 or -ENOMEM. */
int symbolizer__file(struct symbolizer *s, const struct sym_mapping *m);

/* Whether addr lies in a mapping proc is known to have (or in code its perf map names): a
 * frame-pointer walk's frame that does not is no frame. */
bool symbolizer__mapped(struct symbolizer *s, uint64_t proc, uint64_t addr);

/* Whether addr lies in a binary whose file is late (lib/file_worker.h: its disk slow, or its
 * filesystem stalled) and has been for less than 3 s, asking for it again first: a stack
 * with such an address is worth holding back until the file comes and names it. */
bool symbolizer__awaited(struct symbolizer *s, uint64_t proc, uint64_t addr);

/* The executable mapping of proc that holds addr: where it is, and its file (ino 0: not a
 * file; LX_VDSO_INO with dev 0: the vDSO). */
struct sym_code {
	uint64_t start, end, pgoff;	/* pgoff in bytes */
	uint64_t dev, ino;		/* st_dev (makedev) and inode */
	pid_t pid;
	const char *path;		/* where the file was found, "" if nowhere */
};

/* 0 with *out, or -ENOENT when addr is in no mapping proc is known to have. */
int symbolizer__code_at(struct symbolizer *s, uint64_t proc, uint64_t addr, struct sym_code *out);

/* Starts proc as an image without mappings (a new address space: an exec), replacing an earlier
 * snapshot of proc. snapshot: its mappings are read from /proc once and the kernel reports no
 * later ones, so an address they miss may re-read them (as a process noted from /proc). 0 or
 * -ENOMEM. */
int symbolizer__image_new(struct symbolizer *s, uint64_t proc, bool snapshot);

/* Starts proc with the mappings of from (a forked process). -ENOENT when from is unknown. */
int symbolizer__image_copy(struct symbolizer *s, uint64_t proc, uint64_t from);

/* Adds m to proc's mappings, replacing those it overlaps (the kernel replaced them), opening
 * its file if new. -ENOENT when proc is unknown. */
int symbolizer__map(struct symbolizer *s, uint64_t proc, const struct sym_mapping *m);

/* Drops proc's snapshot; the binaries stay cached. Call it once the image's records are all
 * symbolized. Unknown procs are ignored. */
void symbolizer__forget_process(struct symbolizer *s, uint64_t proc);

/* The same code in every process that maps its binary, wherever ASLR loaded it: for each of
 * the n user addresses of proc at addrs (each as symbolizer__user looks it up: a return
 * address less one), a word naming its binary and ELF virtual address (SYM_WHERE bits: never
 * 0 or 1), which symbolizer__user expands to the same frames in any of them. False when one
 * lies in no binary, or in one whose names may still change (its file late, or not opened
 * yet): such a stack is named in its own process only. */
#define SYM_WHERE (1ull << 63)
bool symbolizer__where(struct symbolizer *s, uint64_t proc, const uint64_t *addrs, size_t n,
		       uint64_t *out);

/* Expands one user address of proc into frames, innermost first (inlined calls first, then the
 * function holding the code). is_return_addr: addr is a return address (every frame of a
 * sampled stack but the leaf), looked up at addr - 1 so the line is the call's. A pid never
 * noted is noted now. Returns the number of frames written (>= 1: an address nothing knows
 * is one "[unknown] ..." frame) or -errno (-EINVAL: max < 1). */
int symbolizer__user(struct symbolizer *s, uint64_t proc, uint64_t addr, bool is_return_addr,
		     struct sym_frame *out, int max);

/* A frame of code no address stands for (a Python function), named by the caller, at a PC of
 * its own in the symbolizer's synthetic range, one-to-one with (func, file, line) like every
 * other. 1, or -ENOMEM. */
int symbolizer__named(struct symbolizer *s, const char *func, const char *file, uint64_t line,
		      struct sym_frame *out);

/* The same for a kernel address (one frame: func = function, file = "[kernel]" or the
 * module in brackets, e.g. "[bpf]", line 0). kallsyms is read on the first call. */
int symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return_addr,
		       struct sym_frame *out, int max);

/* Reads ahead what the first lookups would read, so that they cost the recording nothing:
 * kallsyms (when kernel), then the symbols and DWARF of the binaries the noted processes map,
 * the most mapped first (libc), until budget_ns have passed. DWARF over 32 MiB is left for its
 * first use (sym_elf__prepare). */
void symbolizer__prepare(struct symbolizer *s, bool kernel, uint64_t budget_ns);

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

/* symbolizer_stats.modules_read_late, at no cost: whoever keeps stacks by their addresses
 * forgets them when it changes. */
uint64_t symbolizer__read_late(const struct symbolizer *s);

/* The files other users control that were refused (each once), for the summary. Valid for the
 * symbolizer's life. */
const struct foreign_log *symbolizer__refused(const struct symbolizer *s);

/* Names a, an address of process pid's JIT code that a lookup left unnamed (late_jit), from
 * the perf map as it stands now: a map the process wrote as it exited, or on request (the
 * JVM's), after its stacks were made. The process may be gone; its map is opened under the
 * same rules as during its life, as its user's (or root's), unless it was refused then. The
 * frame is that of a lookup (a new PC: the old one stands for the unnamed frame). The map is
 * read once, then only what was appended to it (sym_perfmap.h); last: no lookup of it comes
 * after this round (the recording's end), so a map absent now is not looked for again, where
 * before it (a flight recorder's window) it is looked for at the next lookup. 1 with *out
 * filled, 0 when the map does not name a (or there is none), or -errno. */
int symbolizer__late_jit(struct symbolizer *s, pid_t pid, uint64_t a, bool last,
			 struct sym_frame *out);

/* Whether process pid has no perf map at all now (no name perf-PID.map in the maps'
 * directory, of any kind): once it has exited, symbolizer__late_jit can name nothing of it. */
bool symbolizer__perf_map_absent(const struct symbolizer *s, pid_t pid);

/* The recording has stopped: the binaries whose open is still late (lib/file_worker.h) are
 * named in symbolizer__unread. */
void symbolizer__finish(struct symbolizer *s);

/* The binaries not read in time by the end (each once), "read stalled" when their filesystem
 * has not answered since, "read slow" when it answered too late, for the summary; empty before
 * symbolizer__finish. Valid for the symbolizer's life. */
const struct foreign_log *symbolizer__unread(const struct symbolizer *s);

/* Accepts NULL. */
void symbolizer__free(struct symbolizer *s);

#endif
