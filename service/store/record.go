package store

import (
	"encoding/binary"
	"fmt"
)

// recordVersion is the first byte of every encoded record; a future layout
// gets a new number so that old files stay readable.
const recordVersion = 1

// record is the stored form of a key's value and revisions.
type record struct {
	createRev int64
	modRev    int64
	value     []byte
}

// encodeRecord lays a record out as
//
//	version (1 byte) | uvarint createRev | uvarint (modRev - createRev) | value
//
// so that a small key costs 3-8 bytes of overhead.
func encodeRecord(r record) []byte {
	buf := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(r.value))
	buf = append(buf, recordVersion)
	buf = binary.AppendUvarint(buf, uint64(r.createRev))
	buf = binary.AppendUvarint(buf, uint64(r.modRev-r.createRev))
	return append(buf, r.value...)
}

// decodeRecord parses an encoded record. The returned value aliases b.
func decodeRecord(b []byte) (record, error) {
	if len(b) == 0 {
		return record{}, fmt.Errorf("decode record: empty")
	}
	if b[0] != recordVersion {
		return record{}, fmt.Errorf("decode record: unknown version %d", b[0])
	}
	b = b[1:]
	create, n := binary.Uvarint(b)
	if n <= 0 {
		return record{}, fmt.Errorf("decode record: bad create revision")
	}
	b = b[n:]
	delta, n := binary.Uvarint(b)
	if n <= 0 {
		return record{}, fmt.Errorf("decode record: bad mod revision")
	}
	b = b[n:]
	const maxRev = 1<<63 - 1
	if create == 0 || create > maxRev || delta > maxRev-create {
		return record{}, fmt.Errorf("decode record: revisions out of range (create %d, delta %d)", create, delta)
	}
	return record{createRev: int64(create), modRev: int64(create + delta), value: b}, nil
}

// encodeRev and decodeRev store the revision counter in the meta bucket.
func encodeRev(rev int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(rev))
}

func decodeRev(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("decode revision: %d bytes, want 8", len(b))
	}
	rev := int64(binary.BigEndian.Uint64(b))
	if rev < 0 {
		return 0, fmt.Errorf("decode revision: negative (%d)", rev)
	}
	return rev, nil
}
