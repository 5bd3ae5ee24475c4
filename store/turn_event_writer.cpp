#include "store/turn_event_writer.hpp"

#include <sqlite3.h>

#include "store/error.hpp"
#include "store/sql_util.hpp"

namespace plotq::store::turns {
namespace {

constexpr const char* kInsert =
    "INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES (?, ?, ?, ?, ?)";
constexpr const char* kFinish =
    "UPDATE turns SET status = 'done', outcome = ?, code = ?, ended_at = ? WHERE id = ? AND status <> 'done'";

// Runs one step of a reused statement and leaves it ready for the next row, whatever happened.
// Text is bound without a copy (SQLITE_STATIC): the views outlive the step, and the bindings are
// cleared before returning. Throws SQLite::Exception with the extended code (guarded maps it).
class Row {
 public:
  Row(sqlite3* db, sqlite3_stmt* q) : db_(db), q_(q) {}
  ~Row() {
    sqlite3_reset(q_);
    sqlite3_clear_bindings(q_);
  }
  void text(int i, std::string_view v) { check(sqlite3_bind_text(q_, i, v.data(), int(v.size()), SQLITE_STATIC)); }
  void integer(int i, std::int64_t v) { check(sqlite3_bind_int64(q_, i, v)); }
  int run() {
    int rc = sqlite3_step(q_);
    if (rc != SQLITE_DONE) throw SQLite::Exception(db_, sqlite3_reset(q_));
    return sqlite3_changes(db_);
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw SQLite::Exception(db_, rc);
  }
  sqlite3* db_;
  sqlite3_stmt* q_;
};

}  // namespace

EventWriter::EventWriter(Db& db)
    : db_(db),
      insert_(guarded("prepare turn event statements", [&] { return db.cached_statement(kInsert); })),
      finish_(guarded("prepare turn event statements", [&] { return db.cached_statement(kFinish); })) {}

void EventWriter::append(std::string_view turn_id, std::int64_t seq, std::string_view event,
                         std::string_view data_json, std::string_view created_at) {
  guarded("append turn event", [&] {
    Row r(db_.sql().getHandle(), insert_);
    r.text(1, turn_id);
    r.integer(2, seq);
    r.text(3, event);
    r.text(4, data_json);
    r.text(5, created_at);
    r.run();
  });
}

void EventWriter::finish(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
                         std::string_view ended_at) {
  guarded("finish turn", [&] {
    int changed = 0;
    {
      Row r(db_.sql().getHandle(), finish_);
      r.text(1, outcome);
      if (code) r.text(2, *code);  // else NULL (bindings were cleared)
      r.text(3, ended_at);
      r.text(4, turn_id);
      changed = r.run();
    }
    if (changed == 0) detail::explain_turn_no_change(db_.sql(), std::string(turn_id), "queued or running");
  });
}

}  // namespace plotq::store::turns
