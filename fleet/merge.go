package fleet

import (
	"errors"
	"fmt"
)

// ErrMergeOverlap is returned when two reports name the same image: the
// shards of one list are disjoint.
var ErrMergeOverlap = errors.New("reports overlap")

// Merge adds the images of r to into, and r's counts to into's summary. An
// image already in into is an error (ErrMergeOverlap).
func Merge(into *Report, r Report) error {
	seen := make(map[string]bool, len(into.Images))
	for _, im := range into.Images {
		seen[im.Ref] = true
	}
	for _, im := range r.Images {
		if seen[im.Ref] {
			return fmt.Errorf("%w: %s is in two of them", ErrMergeOverlap, im.Ref)
		}
		seen[im.Ref] = true
		into.Images = append(into.Images, im)
		into.Summary.Add(im)
	}
	s := &into.Summary
	s.BaseLookups += r.Summary.BaseLookups
	s.BaseConfigReads += r.Summary.BaseConfigReads
	s.Requests += r.Summary.Requests
	return nil
}
