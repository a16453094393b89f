package buildtest

import (
	"github.com/docker/buildx/store"
	"github.com/docker/buildx/util/confutil"
)

// SaveBuildxInstances writes builder instances into the buildx config
// directory dir (what BUILDX_CONFIG names) with buildx's own store API,
// as docker buildx create does.
func SaveBuildxInstances(dir string, ngs ...*store.NodeGroup) error {
	return withBuildxStore(dir, func(txn *store.Txn) error {
		for _, ng := range ngs {
			if err := txn.Save(ng); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetCurrentBuildx records name as the current builder for the Docker
// endpoint key in the buildx store at dir, with buildx's store API: what
// `docker buildx use [--global] NAME` writes.
func SetCurrentBuildx(dir, key, name string, global bool) error {
	return withBuildxStore(dir, func(txn *store.Txn) error { return txn.SetCurrent(key, name, global, false) })
}

// withBuildxStore runs f in a transaction on the buildx store at dir.
func withBuildxStore(dir string, f func(*store.Txn) error) error {
	s, err := store.New(confutil.NewConfig(nil, confutil.WithDir(dir)))
	if err != nil {
		return err
	}
	txn, release, err := s.Txn()
	if err != nil {
		return err
	}
	defer release()
	return f(txn)
}
