// The shims live in the header as static inline functions; this file gives the target a
// translation unit so SwiftPM builds it as a C library.
#include "CShoalSystem.h"
