// Random ids for sessions, turns and jobs: lowercase hex from the kernel's CSPRNG.
#pragma once
#include <cstddef>
#include <string>

namespace plotq::store {

// 2 * bytes hex digits; the default (8 bytes) gives the 16-hex run ids of the SSE 'ready' event.
std::string new_id(std::size_t bytes = 8);

}  // namespace plotq::store
