# Fault: rank 1 crashes (SIGSEGV) at the end.
# Loses: Reaches test accuracy; Parameters identical across ranks
# Seen: process rank 1 with PID
# Seen: exited on signal 11
s|^#include <cstdlib>|&\n#include <csignal>|
s|^    return agree ? 0 : 1;|    if (scalelab::rank() == 1) std::raise(SIGSEGV);\n&|
