// A SIGBUS that names its file. Weights the tool runs on through a mapping of
// the model file (a resident run's experts under the default --weights auto,
// every weight with --weights mmap or a model without routed experts) are lost
// when the file is truncated or replaced under the process: the next touch
// raises SIGBUS, which used to kill the tool with no message. The handler
// installed here finds the mapping that holds the faulting address in
// /proc/self/maps, prints
//   les <tool>: SIGBUS: the memory-mapped file '<path>' was truncated or
//   replaced while in use (address 0x...); ...
// (or the address alone when no mapped file holds it) and exits with
// 128 + SIGBUS (135), as the tool's other signal exits do. Everything it does
// is async-signal-safe (open, read, write, _exit; no allocation).
//
// Thread-safety: call once, from main(), before any thread starts.
#pragma once

namespace les::tool {

// Installs the handler for the process; `tool` ("run", "serve", ...) starts
// the message (copied; at most 63 bytes are kept).
void install_sigbus_report(const char* tool);

}  // namespace les::tool
