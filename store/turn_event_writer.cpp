#include "store/turn_event_writer.hpp"

#include "store/error.hpp"
#include "store/sql_util.hpp"

namespace plotq::store::turns {
namespace {

constexpr const char* kInsert =
    "INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES (?, ?, ?, ?, ?)";
constexpr const char* kFinish =
    "UPDATE turns SET status = 'done', outcome = ?, code = ?, ended_at = ? WHERE id = ? AND status <> 'done'";

}  // namespace

EventWriter::EventWriter(Db& db) : db_(db) {}

void EventWriter::append(std::string_view turn_id, std::int64_t seq, std::string_view event,
                         std::string_view data_json, std::string_view created_at) {
  guarded("append turn event", [&] {
    Stmt r(db_, kInsert);
    r.bind(1, turn_id);
    r.bind(2, seq);
    r.bind(3, event);
    r.bind(4, data_json);
    r.bind(5, created_at);
    r.send();  // a batch's rows go out with its first statement that waits (the end, or the commit)
  });
}

// The end's statement, bound; `checked`: run it and explain a turn it did not change, else send it.
void EventWriter::end(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
                      std::string_view ended_at, bool checked) {
  guarded("finish turn", [&] {
    Stmt r(db_, kFinish);
    r.bind(1, outcome);
    if (code) r.bind(2, *code);
    else r.bind(2);
    r.bind(3, ended_at);
    r.bind(4, turn_id);
    if (!checked) return r.send();
    if (r.exec() == 0) detail::explain_turn_no_change(db_, std::string(turn_id), "queued or running");
  });
}

void EventWriter::finish(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
                         std::string_view ended_at) {
  end(turn_id, outcome, code, ended_at, true);
}

void EventWriter::finish_own(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
                             std::string_view ended_at) {
  end(turn_id, outcome, code, ended_at, false);
}

}  // namespace plotq::store::turns
