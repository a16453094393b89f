package fleet

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrShard is returned for a --shard that is not I/N with 1 <= I <= N.
var ErrShard = errors.New("invalid shard: want I/N with 1 <= I <= N")

// Shard is part I of N of a fleet (I from 1, as a CI matrix counts).
type Shard struct{ I, N int }

// ParseShard reads "I/N"; "" is the whole fleet (1/1).
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{1, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("%w: %q", ErrShard, s)
	}
	return Shard{i, n}, nil
}

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Has reports whether the reference ref (in its canonical form) belongs
// to this shard: the first 8 bytes of the SHA-256 of the reference, modulo N. It depends on the
// reference alone, so the split does not change when the list is
// reordered or grows.
func (s Shard) Has(ref string) bool {
	if s.N <= 1 {
		return true
	}
	// FNV-1a's low bits hardly vary between references that differ in
	// their last characters (app1:1.0.1, app2:1.0.2), which left shards
	// empty; SHA-256 spreads them.
	h := sha256.Sum256([]byte(ref))
	return int(binary.BigEndian.Uint64(h[:8])%uint64(s.N)) == s.I-1
}
