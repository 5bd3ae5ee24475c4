// The figure renderer's process supervision (internal to FigureRenderer): starting one renderer
// process (own process group, parent-death signal, optional empty network and new PID namespace,
// a clean environment, pipes for stdin/stdout/stderr and no other descriptor), reading its lines
// and stderr tail, noticing its exit through a pidfd, killing all of it, tearing it down. What the
// lines mean (the protocol) and which job waits for what (the queue) live in figure_renderer.cpp.
#pragma once
#include <sys/types.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace plotq::sandbox {

struct FigureConfig;

// One renderer process: its pipes, pidfd, private temp dir and state.
struct FigureProc {
  explicit FigureProc(boost::asio::io_context& io);

  pid_t pid = 0;
  std::string tmp_dir;
  boost::asio::posix::stream_descriptor in, out, err, pidfd;
  boost::asio::streambuf out_buf;
  std::array<char, 4096> err_chunk{};
  std::string err_tail;
  boost::asio::steady_timer start_timer;
  boost::asio::steady_timer kill_timer;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  bool ready = false;
  bool exited = false;
  bool killed = false;
  std::uint64_t jobs = 0;
  // Lines to the renderer, written one at a time (a job and a cancel may be sent back to back).
  std::deque<std::string> write_queue;
  bool writing = false;
};

// Kills the renderer's whole process group (node, the launcher, Chromium and its helpers).
void kill_group(FigureProc& p);

// Starts a renderer: makes a private dir under cfg.figure_tmp_root, then runs argv_for(tmp_dir).
// On failure `error` says why and nothing is left running.
struct FigureSpawn {
  std::shared_ptr<FigureProc> proc;
  std::string error;
};
FigureSpawn spawn_figure_process(boost::asio::io_context& io, const FigureConfig& cfg,
                                 const std::function<std::vector<std::string>(const std::string&)>& argv_for);

// After the exit: the exit status and the last of stderr. exit_code is -1 when a signal ended it.
struct FigureExit {
  int exit_code = -1;
  int signal = 0;
  std::string stderr_tail;  // at most the last 600 bytes
};

// What the process says and does, delivered on the io_context. Each callback locks its owner
// itself (they outlive nothing: the owner's destructor closes the descriptors).
struct FigureProcEvents {
  std::function<void(const std::string& line)> on_line;  // one stdout line, without the newline
  std::function<void(const char* fault)> on_fault;       // a stdout line over the cap
  std::function<void(const FigureExit&)> on_exit;        // reaped (see below)
};
// Starts reading stdout lines and the stderr tail and waiting for the exit. At the exit it reaps,
// kills what is left of the group, closes stdin and the pidfd, logs figure_renderer_exit and
// removes the private dir, then calls on_exit. stdout EOF kills the group (the exit follows).
void watch_figure_process(const std::shared_ptr<FigureProc>& p, std::size_t stderr_keep_bytes,
                          FigureProcEvents events);

// Queues one line for the renderer's stdin; a write error kills the group (its exit answers).
void send_figure_line(const std::shared_ptr<FigureProc>& p, std::string line);

// Synchronous teardown for a destructor: kill, reap (immediate after SIGKILL), close, remove.
void destroy_figure_process(FigureProc& p);

}  // namespace plotq::sandbox
