/* versioned.c - symbolizer fixture: a shared library built the way Debian builds libc.
 *
 * vfunc has two versions, as glibc's pthread_cond_wait has: the default one (vfunc@@V_2) and
 * a compatibility one (vfunc@V_1); the linker writes each version into the name it gives the
 * symbol in .symtab. The Makefile compiles this file from its own directory with the build
 * root mapped to ".", so DW_AT_comp_dir is relative ("./tests/symfix") and is also the line
 * table's directory 0, as libc's "./libio" is. The tests open the library as a file and look
 * its functions up at the addresses the symbol table gives.
 */
int vfunc_v1(int x);
int vfunc_v2(int x);

__attribute__((symver("vfunc@V_1"))) int vfunc_v1(int x)
{
	return x + 1;
}

__attribute__((symver("vfunc@@V_2"))) int vfunc_v2(int x)
{
	return x * 2; /* LINE:vfunc_v2 */
}
