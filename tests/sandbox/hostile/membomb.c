/* Memory bomb in C: allocate and touch chunks until malloc fails. Returns MiB obtained. */
#include <stdlib.h>
#include <string.h>

int mem_bomb(int chunk_mb, int max_mb) {
  int got = 0;
  while (got < max_mb) {
    char* p = malloc((size_t)chunk_mb << 20);
    if (!p) break;
    memset(p, 0xA5, (size_t)chunk_mb << 20); /* really use it */
    got += chunk_mb;
  }
  return got;
}
