#include "store/sql.hpp"

#include "store/db.hpp"
#include "common/text.hpp"
#include "store/driver.hpp"
#include "store/error.hpp"

namespace plotq::store {

bool Column::isNull() const { return c_.is_null(i_); }
std::string Column::getString() const { return c_.is_null(i_) ? std::string() : c_.text(i_); }
std::int64_t Column::getInt64() const { return c_.is_null(i_) ? 0 : c_.int64(i_); }
double Column::getDouble() const { return c_.is_null(i_) ? 0.0 : c_.real(i_); }
std::string Column::getBlob() const { return c_.is_null(i_) ? std::string() : c_.blob(i_); }
std::string Column::getName() const { return c_.name(i_); }

Stmt::Stmt(Db& db, std::string_view sql) : c_(db.conn().prepare(sql)) {}
Stmt::~Stmt() = default;
void Stmt::bind(int i) { c_->bind_null(i); }
void Stmt::bind(int i, std::string_view v) {
  // A text value is one both engines hold. PostgreSQL's text refuses invalid UTF-8, and libpq would
  // cut a value at its first NUL byte (parameters go as C strings): both are refused here, on
  // either engine, with the code PostgreSQL gives the first.
  if (!storable_text(v)) throw StoreError("constraint", "a text value with a NUL byte or invalid UTF-8");
  c_->bind_text(i, v);
}
void Stmt::bind(int i, double v) { c_->bind_real(i, v); }
void Stmt::bind_int(int i, std::int64_t v) { c_->bind_int(i, v); }
void Stmt::bind_blob(int i, std::string_view bytes) { c_->bind_blob(i, bytes); }
bool Stmt::executeStep() { return c_->step(); }
std::int64_t Stmt::exec() { return c_->run(); }
void Stmt::send() { c_->send(); }
Column Stmt::getColumn(int i) const { return Column(*c_, i); }
int Stmt::columnCount() const { return c_->columns(); }
void Stmt::reset() { c_->reset(); }

Tx::Tx(Db& db) : db_(db) { db_.conn().begin_write(std::nullopt); }
Tx::Tx(Db& db, std::string_view scope) : db_(db) { db_.conn().begin_write(scope); }
Tx::~Tx() {
  if (!done_) db_.conn().rollback();
}
void Tx::commit() {
  db_.conn().commit();
  done_ = true;
}

}  // namespace plotq::store
