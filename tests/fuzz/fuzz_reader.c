/* fuzz_reader.c - libFuzzer target: the decoder must survive any input without a crash, a
 * leak or an out-of-bounds access, and must explain every refusal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gt_trace *t = NULL;
	char err[256];

	if (gt_trace__parse(data, size, &t, err, sizeof(err))) {
		if (!err[0] || t)
			abort();
		return 0;
	}
	/* Touch everything the decoder resolved. */
	for (size_t i = 0; i < gt_trace__nevents(t); i++) {
		const struct gt_event *e = &gt_trace__events(t)[i];

		if (e->stack)
			for (size_t j = 0; j < e->stack->n; j++)
				if (strlen(e->stack->frames[j].func) > size)
					abort();
		if (e->msg_len && e->msg[e->msg_len - 1] == 0x7f && e->msg_len > size)
			abort();
	}
	gt_trace__free(t);
	return 0;
}
