/* py_debug_offsets.c - 3.13's _Py_DebugOffsets checked against lxtrace's table
 * (py_debug_offsets.h). */
#include <stdbool.h>
#include <string.h>

#include "user/stacks/py_debug_offsets.h"

/* The block as 3.13 lays it out (internal/pycore_runtime.h): each part starts with the size
 * of the structure its offsets are in. */
struct block {
	char cookie[8];
	uint64_t version;	/* PY_VERSION_HEX */
	uint64_t free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime;
	struct {
		uint64_t size, id, next, threads_head;
		uint64_t rest[9];	/* gc, modules, ..., the GIL's: not read */
	} interp;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id;
		uint64_t datastack_chunk, status;
	} tstate;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount;
		uint64_t localsplusnames, localspluskinds, code_adaptive;
	} code;
	struct {
		uint64_t size, ob_type;
	} object;
	uint64_t others[18];	/* type, tuple, list, dict, float and long objects': not read */
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes;
	struct {
		uint64_t size, state, length, ascii_size;
	} str;
	struct {
		uint64_t size, collecting;
	} gc;
};

_Static_assert(sizeof(struct block) == PY_DEBUG_OFFSETS_SIZE, "3.13's _Py_DebugOffsets");

/* No structure the block describes is near this large: a size beyond is no block's. */
#define MAX_STRUCT (1u << 20)

/* Whether a field of 8 bytes at off lies in a structure of size bytes. */
static bool within(uint64_t off, uint64_t size)
{
	return size <= MAX_STRUCT && off <= size - 8 && size >= 8;
}

static bool valid(const struct block *b)
{
	return within(b->runtime.interpreters_head, b->runtime.size) &&
	       within(b->interp.threads_head, b->interp.size) &&
	       within(b->tstate.next, b->tstate.size) &&
	       within(b->tstate.current_frame, b->tstate.size) &&
	       within(b->tstate.native_thread_id, b->tstate.size) &&
	       within(b->frame.previous, b->frame.size) &&
	       within(b->frame.executable, b->frame.size) &&
	       within(b->frame.instr_ptr, b->frame.size) &&
	       b->frame.owner < b->frame.size && b->frame.size <= MAX_STRUCT &&
	       within(b->code.filename, b->code.size) && within(b->code.qualname, b->code.size) &&
	       within(b->code.linetable, b->code.size) &&
	       within(b->code.firstlineno, b->code.size) &&
	       b->code.code_adaptive <= b->code.size && within(b->object.ob_type, b->object.size) &&
	       within(b->bytes.ob_size, b->bytes.size) && b->bytes.ob_sval <= b->bytes.size &&
	       within(b->str.length, b->str.size) && within(b->str.state, b->str.size) &&
	       b->str.ascii_size <= b->str.size;
}

/* Whether every offset the block and the table both have is the same. */
static bool agree(const struct block *b, const struct py_layout *l)
{
	const struct lx_py_layout *w = &l->walk;

	return !b->free_threaded && b->runtime.interpreters_head == l->runtime_interp_head &&
	       b->interp.threads_head == l->interp_threads_head &&
	       b->tstate.next == l->tstate_next && w->cframe_frame == LX_PY_NONE &&
	       b->tstate.current_frame == w->tstate_frame &&
	       b->tstate.native_thread_id == l->tstate_native_tid &&
	       b->frame.previous == w->frame_previous && b->frame.executable == w->frame_code &&
	       b->frame.instr_ptr == w->frame_instr && b->frame.owner == w->frame_owner &&
	       b->frame.size >= w->frame_read && b->code.filename == l->code_filename &&
	       b->code.qualname == l->code_qualname && b->code.linetable == l->code_linetable &&
	       b->code.firstlineno == l->code_firstlineno &&
	       b->code.code_adaptive == l->code_adaptive && b->object.ob_type == PY_OB_TYPE &&
	       b->bytes.ob_size == PY_BYTES_SIZE && b->bytes.ob_sval == PY_BYTES_DATA &&
	       b->str.length == PY_STR_LENGTH && b->str.state == PY_STR_STATE &&
	       b->str.ascii_size == l->str_ascii_data;
}

enum py_debug_verdict py_debug_offsets__check(const void *block, size_t len, uint32_t version,
					      const struct py_layout *l)
{
	struct block b;

	if (len < sizeof(b))
		return PY_DEBUG_INVALID;
	memcpy(&b, block, sizeof(b));
	/* The same major and minor as Py_Version says: the block's layout is that version's. */
	if (memcmp(b.cookie, "xdebugpy", 8) || b.version >> 16 != version >> 16 || !valid(&b))
		return PY_DEBUG_INVALID;
	return agree(&b, l) ? PY_DEBUG_AGREE : PY_DEBUG_DISAGREE;
}
