package fsx

import (
	"encoding/binary"
	"os"
	"sync"
	"time"
)

// A Stamp is what stat says of one version of a file: which file it is
// (device and inode), its type and permissions, its size, and when its
// content (mtime) and its inode (ctime) last changed, in nanoseconds. The
// ctime is the one a process cannot set: any write, truncate, rename over
// the name, chmod or utimes (os.Chtimes setting the mtime back) moves it to
// the kernel's clock of the moment. The zero Stamp stands for "unknown" and
// equals no other.
type Stamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64
	known        bool
}

// Size is the file's size as stamped.
func (s Stamp) Size() int64 { return s.size }

// TrustFor bounds how long a stamp alone vouches for bytes read once: past
// it the file is read again whatever its stamp says. A write through a
// shared memory mapping moves the ctime at its first store into a clean
// page only; later stores into the same page, until the kernel writes it
// back, change the bytes and not the stamp. Reading again now and then
// bounds how long such an edit can go unseen.
const TrustFor = time.Second

// Seen remembers the stamp of the version of a file a process last read,
// and whether that stamp proves the version unchanged while it holds. A
// stamp read too close to the file's last change proves nothing: a change
// within the same tick of the file system's clock keeps the ctime, and,
// with the same size, the whole stamp (git calls such entries racily
// clean). The zero Seen knows nothing. It is not safe for concurrent use.
type Seen struct {
	stamp Stamp
	until time.Time // zero: the stamp proves nothing
}

// Note records st, taken from the file by fstat after start and before its
// bytes were read, as the version now in hand. settle is how long before
// start the file's last change (its ctime) must lie for st to prove the
// version later; negative when nothing proves it (file systems whose
// clock, or whose timestamps' resolution, is unknown).
func (s *Seen) Note(st Stamp, start time.Time, settle time.Duration) {
	s.stamp, s.until = st, time.Time{}
	if st.known && settle >= 0 && st.ctime < start.Add(-settle).UnixNano() {
		s.until = start.Add(TrustFor)
	}
}

// Holds reports whether st, a fresh stat of the file, proves that it still
// holds the version noted, now.
func (s *Seen) Holds(st Stamp, now time.Time) bool {
	return st.known && st == s.stamp && now.Before(s.until)
}

// Live reports whether a stat can still prove anything now: false when
// nothing was noted, the stamp was not settled, or TrustFor has passed
// (then only reading again can tell).
func (s *Seen) Live(now time.Time) bool { return now.Before(s.until) }

// Forget drops what is known.
func (s *Seen) Forget() { *s = Seen{} }

// File is one small file read whole and kept, so that a later read costs
// one stat while the file provably holds the same bytes (Seen). On any doubt
// (a stamp not settled, an error, a stat that differs in anything) it reads
// the file again. It is safe for concurrent use.
type File struct {
	path  string
	flags int

	mu   sync.Mutex
	seen Seen
	data []byte
	now  func() time.Time // for tests
}

// NewFile returns the file at path. flags are added to the open: NoFollow
// for a file that must not be a symlink. The file is always opened
// non-blocking and read only when it is a regular file, so that a FIFO
// planted at path fails the read instead of hanging it.
func NewFile(path string, flags int) *File {
	return &File{path: path, flags: flags, now: time.Now}
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Read returns the file's bytes. fresh is false when they are the bytes the
// previous Read returned (the same slice), kept since, because a stat shows
// the file unchanged; it is true when they were read now (and may still be
// the same bytes). The returned slice is shared: never change it. An error (the
// file is missing: errors.Is(err, fs.ErrNotExist)) drops what was kept.
func (f *File) Read() (data []byte, fresh bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if now.Before(f.seen.until) {
		st, err := stampPath(f.path, f.flags&NoFollow == 0)
		if err != nil {
			f.forgetLocked()
			return nil, false, err
		}
		if f.seen.Holds(st, now) {
			return f.data, false, nil
		}
	}
	// now is before the fstat that stamps what is read, as Note wants.
	data, st, settle, err := readStamped(f.path, f.flags)
	if err != nil {
		f.forgetLocked()
		return nil, false, err
	}
	f.data = data
	f.seen.Note(st, now, settle)
	return data, true, nil
}

// Forget drops the kept bytes: the next Read reads the file.
func (f *File) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgetLocked()
}

func (f *File) forgetLocked() {
	f.seen.Forget()
	f.data = nil
}

// StampOf returns the stamp of path (of the link itself unless follow).
// Where stamps are not available (Windows) it returns the zero Stamp,
// which proves nothing.
func StampOf(path string, follow bool) (Stamp, error) { return stampPath(path, follow) }

// Known reports whether s was taken from a stat at all: the zero Stamp, and
// every stamp where the platform gives none (Windows), is not.
func (s Stamp) Known() bool { return s.known }

// Identity is the file s was taken from: its device and inode.
func (s Stamp) Identity() (dev, ino uint64) { return s.dev, s.ino }

// StampInfo returns the stamp a FileInfo from os.Stat, os.Lstat or
// (*os.File).Stat holds; the zero Stamp where it holds none (Windows, where
// a path's size and times may also lag behind a handle open for writing).
func StampInfo(fi os.FileInfo) Stamp { return stampInfo(fi) }

// StampSize is the length of a stamp's binary form (AppendBinary).
const StampSize = 45

// AppendBinary appends s in a fixed-size binary form (StampSize bytes), for
// a stamp kept in a file: two stamps are equal exactly when their forms are.
// The zero Stamp's form is all zeros, and no known stamp's is.
func (s Stamp) AppendBinary(b []byte) []byte {
	if !s.known {
		return append(b, make([]byte, StampSize)...)
	}
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint64(b, s.dev)
	b = binary.LittleEndian.AppendUint64(b, s.ino)
	b = binary.LittleEndian.AppendUint32(b, s.mode)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.mtime))
	return binary.LittleEndian.AppendUint64(b, uint64(s.ctime))
}
