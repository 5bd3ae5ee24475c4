-- 0006_application_id: marks the file as a plotq store. Never edit this file once landed; add the
-- next number instead.
--
-- The header's application id (offset 68) becomes 'pltq' (0x706c7471). The start-up check
-- (store/integrity.hpp) reads it twice, from the raw file and through SQLite: a -wal that changes
-- it belongs to another database, and a file with another id is not a plotq store. `file(1)` and
-- admins see it with `PRAGMA application_id`. Stores made before this migration have 0 until it runs.
PRAGMA application_id = 1886155889;
