// Most shims live in the header as static inline functions; the SIGBUS guard of shared
// mappings (see CShoalSystem.h) needs state and a signal handler, so it lives here.
#include "CShoalSystem.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define SHOAL_GUARD_SLOTS 256

static _Atomic(uintptr_t) guard_base[SHOAL_GUARD_SLOTS];
static _Atomic(size_t) guard_length[SHOAL_GUARD_SLOTS];
static _Atomic(int) guard_broken[SHOAL_GUARD_SLOTS];
static struct sigaction previous_action;
static _Atomic(int) handler_state;  // 0: not installed, 1: installing, 2: installed

static void shoal_sigbus(int signal, siginfo_t *info, void *context) {
  uintptr_t address = (uintptr_t)info->si_addr;
  for (int i = 0; i < SHOAL_GUARD_SLOTS; i++) {
    uintptr_t base = atomic_load(&guard_base[i]);
    size_t length = atomic_load(&guard_length[i]);
    if (base == 0 || address < base || address >= base + length) continue;
    // mmap is a plain system call, safe in a signal handler. The access that faulted runs
    // again on the zeroed memory once the handler returns.
    void *replaced = mmap((void *)base, length, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (replaced != MAP_FAILED) {
      atomic_store(&guard_broken[i], 1);
      return;
    }
  }
  // Not a guarded mapping: what would have happened without this handler.
  if (previous_action.sa_flags & SA_SIGINFO) {
    previous_action.sa_sigaction(signal, info, context);
  } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(signal);
  } else {
    // The default action, when the faulting access runs again.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGBUS, &fallback, NULL);
  }
}

static void shoal_install_sigbus_handler(void) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&handler_state, &expected, 1)) {
    while (atomic_load(&handler_state) != 2) {}
    return;
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = shoal_sigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, &previous_action);
  atomic_store(&handler_state, 2);
}

int shoal_guard_mapping(void *base, size_t length) {
  shoal_install_sigbus_handler();
  for (int i = 0; i < SHOAL_GUARD_SLOTS; i++) {
    uintptr_t expected = 0;
    if (atomic_compare_exchange_strong(&guard_base[i], &expected, (uintptr_t)base)) {
      atomic_store(&guard_broken[i], 0);
      atomic_store(&guard_length[i], length);
      return i;
    }
  }
  return -1;
}

void shoal_unguard_mapping(int slot) {
  if (slot < 0 || slot >= SHOAL_GUARD_SLOTS) return;
  atomic_store(&guard_length[slot], 0);
  atomic_store(&guard_base[slot], 0);
}

int shoal_mapping_broken(int slot) {
  if (slot < 0 || slot >= SHOAL_GUARD_SLOTS) return 0;
  return atomic_load(&guard_broken[slot]);
}
