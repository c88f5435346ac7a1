/* Leaving a failed rank's program: the launcher runs the JIT'd entry through
 * hir_exit_call, and a runtime entry called on a failed rank jumps back there
 * (hir_exit_leave) instead of returning into the program, so that a program
 * whose loops call the runtime ends at its next call. The frames skipped are
 * the program's (JIT'd code, which has nothing to unwind) and the runtime
 * entry's, which holds nothing to drop when it leaves (runtime/src/exit.rs). */
#include <setjmp.h>
#include <stddef.h>

typedef void (*hir_packed)(void **arguments);

/* The innermost hir_exit_call of this thread, or none. */
static _Thread_local sigjmp_buf *target;

int hir_exit_call(hir_packed entry, void **arguments) {
  sigjmp_buf here;
  sigjmp_buf *outer = target;
  /* 0: no signal mask saved or restored, so neither costs a system call. */
  if (sigsetjmp(here, 0) != 0) {
    target = outer;
    return 1;
  }
  target = &here;
  entry(arguments);
  target = outer;
  return 0;
}

int hir_exit_can_leave(void) { return target != NULL; }

void hir_exit_leave(void) { siglongjmp(*target, 1); }
