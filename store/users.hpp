// users: callers known to plotq. Rows are created on first use by the other repositories.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"

namespace plotq::store {

struct User {
  std::string id;
  UnixSeconds created_at = 0;
  std::optional<std::string> label;  // admin note
};

namespace users {
void ensure(Db& db, const std::string& id, UnixSeconds now);  // insert when missing
std::optional<User> get(Db& db, const std::string& id);
void set_label(Db& db, const std::string& id, const std::optional<std::string>& label);  // not_found
std::vector<User> list(Db& db);
}  // namespace users

}  // namespace plotq::store
