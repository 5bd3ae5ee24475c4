// Which user owns a session, as this node learnt it (a session's owner never changes): a message to
// a session the node knows goes straight to its admission, whose transaction reads the session's
// state itself (open, closed, gone), instead of costing a store call of its own first. Bounded:
// once it holds kMaxSessionOwners ids it starts again empty. Loop thread only.
#pragma once
#include "common/limits.hpp"
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace plotq::server {

// Enough for every session active on a node in a day; an id and a user id are well under 200 bytes.
using ::plotq::limits::kMaxSessionOwners;  // common/limits.hpp

class SessionOwners {
 public:
  std::optional<std::string> find(std::string_view session) const {
    auto it = owners_.find(std::string(session));
    if (it == owners_.end()) return std::nullopt;
    return it->second;
  }
  void remember(const std::string& session, const std::string& user) {
    if (owners_.size() >= kMaxSessionOwners) owners_.clear();
    owners_[session] = user;
  }
  void forget(const std::string& session) { owners_.erase(session); }

 private:
  std::unordered_map<std::string, std::string> owners_;
};

}  // namespace plotq::server
