"""The plain script a user might write instead of livefeed (issue 7's yardstick): Python's lzma
(through tarfile), json and sqlite3; one transaction; the same table, rowid key and MBID index as
livefeed's `changes`. Usage: plain.py ARCHIVE.tar.xz DB PACKET ENTITY ENTITY_SLOT"""

import json
import sqlite3
import sys
import tarfile

archive, db_path, packet, entity, slot = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
base = (packet * 16 + slot) * 2**28

db = sqlite3.connect(db_path, isolation_level=None)
db.execute(
    "CREATE TABLE IF NOT EXISTS changes (id INTEGER PRIMARY KEY, packet INTEGER NOT NULL, entity TEXT NOT NULL,"
    " position INTEGER NOT NULL, mbid TEXT NOT NULL, data TEXT NOT NULL)"
)
db.execute("CREATE INDEX IF NOT EXISTS changes_mbid ON changes (mbid)")


def rows(lines):
    for position, raw in enumerate(lines, 1):
        line = raw.decode("utf-8").rstrip("\n")
        entity_json = json.loads(line)
        yield (base + position, packet, entity, position, entity_json["id"], line)


with tarfile.open(archive, "r:xz") as tar:
    member = tar.extractfile(f"mbdump/{entity}")
    db.execute("BEGIN")
    db.executemany("INSERT INTO changes VALUES (?, ?, ?, ?, ?, ?)", rows(member))
    db.execute("COMMIT")
print(db.execute("SELECT count(*) FROM changes").fetchone()[0])
