// Where a catalogue sweep keeps its thumbnails (sweep/images.hpp makes them): files beside the
// store, one directory per sweep, never rows, so the store stays small and its writes short:
//   <db>.sweep-images/<sweep id>/                       (SQLite)
//   ./var/sweep-images/pg-<digest of the target>/<sweep id>/   (PostgreSQL: no file to sit beside)
// The store owns the layout because its rows own the directories: a sweep retention deletes takes
// its directory with it, and a directory no sweep row names (a crash between the two) goes at the
// next prune that deletes a sweep. Only plotq's own processes write here (the sandbox policy hides
// the store from jobs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "store/db.hpp"

namespace plotq::store {

std::string sweep_images_root(const std::string& db_path);  // <db>.sweep-images
std::string sweep_images_dir(const std::string& db_path, std::int64_t sweep_id);

// Removes one sweep's directory; a link is removed, never followed. Missing is fine.
void remove_sweep_images(const std::string& db_path, std::int64_t sweep_id);

// Removes the directory of every sweep id the store does not have (and anything else in the root
// that is not a sweep's directory). Lists first, then reads the ids: a sweep's row is committed
// before its directory is made, so a sweep that is running keeps its thumbnails. Returns how many
// entries went. Never throws for the files (a directory that cannot go stays for the next prune);
// throws StoreError when the ids cannot be read.
std::size_t remove_orphan_sweep_images(Db& db);

}  // namespace plotq::store
