#include "tools/training/heap_reuse.h"

#include <malloc.h>

namespace splitbrain::tools {

void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_MAX, 0);              // every block from the heap, none mapped on its own
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and the heap's free top kept, up to 1 GiB
}

}  // namespace splitbrain::tools
