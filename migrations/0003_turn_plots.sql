-- 0003_turn_plots: the PNGs a chat turn's plot action rendered, one row per (turn, theme), served
-- at GET /v1/sessions/{session}/turns/{turn}/plots/{theme}.png. Never edit this file once landed;
-- add the next number instead. Conventions as in 0001_init.sql (STRICT, UTC text times, CHECKed
-- vocabularies). The image is plotq's render output (checked to be a PNG of the canvas size
-- before it lands here); the plot code itself is never stored.
CREATE TABLE turn_plots (
  id          INTEGER PRIMARY KEY,
  turn_id     TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  theme       TEXT NOT NULL CHECK (theme IN ('light', 'dark')),
  width       INTEGER NOT NULL CHECK (width BETWEEN 1 AND 100000),
  height      INTEGER NOT NULL CHECK (height BETWEEN 1 AND 100000),
  bytes       INTEGER NOT NULL CHECK (bytes = length(png) AND bytes > 0),
  png         BLOB NOT NULL CHECK (substr(png, 1, 8) = x'89504E470D0A1A0A'),
  created_at  TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  UNIQUE (turn_id, theme)
) STRICT;

-- Plots of the last 24 hours without the image bytes, newest first.
CREATE VIEW v_turn_plots_recent AS
SELECT p.turn_id, t.session_id, t.user_id, p.theme, p.width, p.height, p.bytes, p.created_at
FROM turn_plots p JOIN turns t ON t.id = p.turn_id
WHERE p.created_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 day')
ORDER BY p.created_at DESC, p.id DESC;
