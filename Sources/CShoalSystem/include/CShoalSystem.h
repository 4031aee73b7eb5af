// Small shims for what Swift cannot call directly on Linux: the futex syscall, and the
// constants for open-file-description locks (which glibc only exposes under _GNU_SOURCE).
#ifndef CSHOAL_SYSTEM_H
#define CSHOAL_SYSTEM_H

#include <stdint.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

/// Wait while `*word == expected` (shared between processes: no FUTEX_PRIVATE_FLAG).
/// Returns 0 when woken, or -1 with errno (EAGAIN: the word already differs; ETIMEDOUT).
static inline int shoal_futex_wait(uint32_t *word, uint32_t expected, const struct timespec *timeout) {
  return (int)syscall(SYS_futex, word, FUTEX_WAIT, expected, timeout, NULL, 0);
}

/// Wake up to `count` waiters on `word`. Returns how many were woken, or -1 with errno.
static inline int shoal_futex_wake(uint32_t *word, int count) {
  return (int)syscall(SYS_futex, word, FUTEX_WAKE, count, NULL, NULL, 0);
}

static inline int shoal_errno(void) { return errno; }

// Open-file-description lock commands (see fcntl(2)); released by the kernel when the last
// descriptor of the open file description is closed, including when the process dies.
static const int SHOAL_F_OFD_GETLK = 36;
static const int SHOAL_F_OFD_SETLK = 37;
static const int SHOAL_F_OFD_SETLKW = 38;

// open(2)'s O_NOATIME (glibc exposes it only under _GNU_SOURCE): reads do not update the
// file's access time, so they do not dirty its inode.
static const int SHOAL_O_NOATIME = 01000000;

#include <stddef.h>

/// Guards a shared mapping of a file another user may truncate (the lock file): touching a
/// page past the file's new end raises SIGBUS, which would kill the process. A SIGBUS handler
/// (installed once, chaining to the one before it for every other address) replaces the whole
/// guarded mapping with zeroed private memory, marks it broken and lets the access go on.
/// Returns the guard's slot, or -1 when every slot is taken (the mapping is then unguarded).
int shoal_guard_mapping(void *base, size_t length);
/// Stops guarding the mapping of `slot` (before unmapping it).
void shoal_unguard_mapping(int slot);
/// Whether the mapping of `slot` was replaced after a SIGBUS.
int shoal_mapping_broken(int slot);

#endif
