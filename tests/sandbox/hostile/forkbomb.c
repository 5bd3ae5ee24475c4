/* Fork bomb and thread bomb in C: fork (or start threads) until the kernel refuses, keep every
 * child alive. Returns how many were made; *err gets the errno of the refusal. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

int fork_bomb(int max, int* err) {
  int n = 0;
  *err = 0;
  while (n < max) {
    pid_t p = fork();
    if (p < 0) {
      *err = errno;
      break;
    }
    if (p == 0) {
      for (;;) pause();
    }
    ++n;
  }
  return n;
}

static void* sleeper(void* arg) {
  (void)arg;
  for (;;) pause();
  return 0;
}

int thread_bomb(int max, int* err) {
  int n = 0;
  *err = 0;
  while (n < max) {
    pthread_t t;
    int rc = pthread_create(&t, 0, sleeper, 0);
    if (rc != 0) {
      *err = rc;
      break;
    }
    ++n;
  }
  return n;
}
