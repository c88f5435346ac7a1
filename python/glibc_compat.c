/* Linked into the `hir` extension (python/build.rs) so that the wheel needs
 * glibc 2.28 at most (manylinux_2_28) though it is linked against Debian 12's
 * glibc 2.36 and static LLVM built there. The linker's --wrap=SYM sends every
 * reference to SYM to __wrap_SYM. For functions that kept their old version
 * in glibc, build.rs generates __wrap_SYM as a jump to SYM@old-version; the
 * functions here have no old version and are written over older ones. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* Before 2.33, stat & co. were inline calls to these with the version of
 * struct stat (1 on x86_64) and of mknod's arguments (0). */
extern int __xstat(int, const char *, struct stat *);
extern int __fxstat(int, int, struct stat *);
extern int __lxstat(int, const char *, struct stat *);
extern int __xstat64(int, const char *, struct stat64 *);
extern int __fxstat64(int, int, struct stat64 *);
extern int __lxstat64(int, const char *, struct stat64 *);
extern int __xmknod(int, const char *, mode_t, dev_t *);

HIDDEN int __wrap_stat(const char *path, struct stat *buf) { return __xstat(1, path, buf); }
HIDDEN int __wrap_fstat(int fd, struct stat *buf) { return __fxstat(1, fd, buf); }
HIDDEN int __wrap_lstat(const char *path, struct stat *buf) { return __lxstat(1, path, buf); }
HIDDEN int __wrap_stat64(const char *path, struct stat64 *buf) { return __xstat64(1, path, buf); }
HIDDEN int __wrap_fstat64(int fd, struct stat64 *buf) { return __fxstat64(1, fd, buf); }
HIDDEN int __wrap_lstat64(const char *path, struct stat64 *buf) { return __lxstat64(1, path, buf); }
HIDDEN int __wrap_mknod(const char *path, mode_t mode, dev_t dev) {
  return __xmknod(0, path, mode, &dev);
}

/* gettid is 2.30; the system call is what it wraps. */
HIDDEN pid_t __wrap_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/* arc4random is 2.36; getrandom (2.25) is the kernel's generator it uses.
 * Like arc4random it cannot fail: getrandom only fails before Linux 3.17. */
HIDDEN uint32_t __wrap_arc4random(void) {
  uint32_t value;
  size_t got = 0;
  while (got < sizeof value) {
    ssize_t n = getrandom((char *)&value + got, sizeof value - got, 0);
    if (n > 0)
      got += (size_t)n;
    else if (errno != EINTR)
      abort();
  }
  return value;
}

/* mallinfo2 is 2.33; LLVM reads it for memory statistics only. mallinfo's
 * int fields wrap past 4 GiB, read here as unsigned. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
HIDDEN struct mallinfo2 __wrap_mallinfo2(void) {
  struct mallinfo m = mallinfo();
  struct mallinfo2 r = {
      .arena = (unsigned)m.arena,
      .ordblks = (unsigned)m.ordblks,
      .smblks = (unsigned)m.smblks,
      .hblks = (unsigned)m.hblks,
      .hblkhd = (unsigned)m.hblkhd,
      .usmblks = (unsigned)m.usmblks,
      .fsmblks = (unsigned)m.fsmblks,
      .uordblks = (unsigned)m.uordblks,
      .fordblks = (unsigned)m.fordblks,
      .keepcost = (unsigned)m.keepcost,
  };
  return r;
}

/* __libc_single_threaded (2.32) lets libstdc++ skip atomics while a process
 * has one thread. Never claiming so is always correct: refcounts stay
 * atomic. */
HIDDEN char __wrap___libc_single_threaded = 0;
