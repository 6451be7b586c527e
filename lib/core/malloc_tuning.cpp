// glibc's allocator thresholds (see malloc_tuning.h).
#include "core/malloc_tuning.h"

#include <malloc.h>

namespace scalelab {

void keep_large_allocations() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum: below it, allocations come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // and freed heap memory stays mapped
}

}  // namespace scalelab
