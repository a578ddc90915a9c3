//go:build go1.23

package warren

import "iter"

// All returns the entries as a range-over-func sequence (Go 1.23 and later):
//
//	it := client.Logs.Audit(ctx, opts)
//	for e := range it.All() {
//		…
//	}
//	if err := it.Err(); err != nil { … }
//
// Breaking out of the loop stops the iteration where it is; Err still reports what ended it.
func (it *Iterator[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for it.Next() {
			if !yield(it.Entry()) {
				return
			}
		}
	}
}
