package warren

import (
	"context"
	"errors"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// DefaultPollInterval is how long a following iterator waits before asking for new entries
// once it has read everything.
const DefaultPollInterval = 2 * time.Second

// Page is one page of a keyset-paged log. NextCursor is always set, also on an empty page:
// pass it back later to get only what arrived since.
type Page[T any] struct {
	Entries    []T    `json:"entries"`
	NextCursor string `json:"nextCursor"`
	HasMore    bool   `json:"hasMore"`
}

// PageOptions are the paging parameters every log shares.
type PageOptions struct {
	// Since starts with what was recorded that long ago, as a duration such as "15m" or
	// "24h" (server default "1h"). Not sent with Cursor.
	Since string
	// Cursor is a NextCursor (or Iterator.Cursor) of an earlier call: start right after it.
	Cursor string
	// Limit is the page size, 1–1000 (server default 100).
	Limit int
	// Follow makes an iterator keep polling for new entries after the last page, until its
	// context ends; single-page calls ignore it.
	Follow bool
	// PollInterval is the wait between polls while following (default DefaultPollInterval).
	PollInterval time.Duration
}

// query encodes the paging parameters; a cursor replaces since.
func (o PageOptions) query() url.Values {
	q := url.Values{}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	} else if o.Since != "" {
		q.Set("since", o.Since)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	return q
}

// pageFunc fetches the page that starts where opts say.
type pageFunc[T any] func(ctx context.Context, opts PageOptions) (*Page[T], error)

// Iterator walks every entry of a paged list (a log, the events, an endpoint's deliveries)
// across pages, in recording order. Range over All, which hands over the error with the entries:
//
//	for e, err := range client.Logs.Audit(ctx, opts).All() {
//		if err != nil { … }
//	}
//
// or step through it in the style of bufio.Scanner, with Next, Entry and Err:
//
//	for it.Next() {
//		e := it.Entry()
//	}
//	if err := it.Err(); err != nil { … }
//
// With PageOptions.Follow it keeps polling with the last cursor once it has read everything,
// and Next returns false only when its context ends (which Err does not report as an error)
// or a call fails. An Iterator is not safe for concurrent use.
type Iterator[T any] struct {
	ctx      context.Context
	fetch    pageFunc[T]
	opts     PageOptions
	buf      []T
	entry    T
	cursor   string
	started  bool
	hasMore  bool
	err      error
	finished bool
}

func newIterator[T any](ctx context.Context, opts PageOptions, fetch pageFunc[T]) *Iterator[T] {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	return &Iterator[T]{ctx: ctx, fetch: fetch, opts: opts, cursor: opts.Cursor}
}

// Next advances to the next entry, fetching pages (and, when following, waiting) as needed.
// It returns false at the end of the log (without Follow), when the context ends, or on an
// error.
func (it *Iterator[T]) Next() bool {
	for len(it.buf) == 0 {
		if it.finished {
			return false
		}
		if it.started && !it.hasMore {
			if !it.opts.Follow {
				it.finished = true
				return false
			}
			if !it.sleep() {
				return false
			}
		}
		if !it.load() {
			return false
		}
	}
	it.entry, it.buf = it.buf[0], it.buf[1:]
	return true
}

// load fetches the next page: from the caller's Since or Cursor the first time, then from the
// last cursor.
func (it *Iterator[T]) load() bool {
	opts := it.opts
	if it.started {
		opts.Since, opts.Cursor = "", it.cursor
	}
	page, err := it.fetch(it.ctx, opts)
	if err != nil {
		it.stop(err)
		return false
	}
	it.started = true
	it.buf, it.hasMore = page.Entries, page.HasMore
	if page.NextCursor != "" {
		it.cursor = page.NextCursor
	}
	return true
}

// sleep waits one poll interval; false when the context ended first.
func (it *Iterator[T]) sleep() bool {
	timer := time.NewTimer(it.opts.PollInterval)
	defer timer.Stop()
	select {
	case <-it.ctx.Done():
		it.stop(it.ctx.Err())
		return false
	case <-timer.C:
		return true
	}
}

// stop ends the iteration. When following, the context ending is how a caller stops, so it is
// not kept as an error.
func (it *Iterator[T]) stop(err error) {
	it.finished = true
	if it.opts.Follow && it.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return
	}
	it.err = err
}

// Entry is the entry Next moved to.
func (it *Iterator[T]) Entry() T { return it.entry }

// Err is the error that ended the iteration, if any.
func (it *Iterator[T]) Err() error { return it.err }

// Cursor is the NextCursor of the last page read (or the starting Cursor): pass it as
// PageOptions.Cursor later to continue right after what was read. When Next stops in the
// middle of a page this skips the page's unread entries, so read to the end first.
func (it *Iterator[T]) Cursor() string { return it.cursor }

// All returns the entries as a range-over-func sequence of (entry, nil) pairs. When a call
// fails it yields one last (zero value, err) pair, so the loop cannot miss the error:
//
//	it := client.Logs.Audit(ctx, opts)
//	for e, err := range it.All() {
//		if err != nil {
//			return err
//		}
//		…
//	}
//
// Breaking out of the loop stops where it is; the iterator can go on from there, and Cursor
// still says where it stands. A follow ended by its context yields no error, as with Err.
func (it *Iterator[T]) All() iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for it.Next() {
			if !yield(it.Entry(), nil) {
				return
			}
		}
		if err := it.Err(); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}
