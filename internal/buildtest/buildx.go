package buildtest

import (
	"github.com/docker/buildx/store"
	"github.com/docker/buildx/util/confutil"
)

// SaveBuildxInstances writes builder instances into the buildx config
// directory dir (what BUILDX_CONFIG names) with buildx's own store API,
// as docker buildx create does.
func SaveBuildxInstances(dir string, ngs ...*store.NodeGroup) error {
	s, err := store.New(confutil.NewConfig(nil, confutil.WithDir(dir)))
	if err != nil {
		return err
	}
	txn, release, err := s.Txn()
	if err != nil {
		return err
	}
	defer release()
	for _, ng := range ngs {
		if err := txn.Save(ng); err != nil {
			return err
		}
	}
	return nil
}

// SetCurrentBuildx records name as the current builder for the Docker
// endpoint key in the buildx store at dir, with buildx's store API: what
// `docker buildx use [--global] NAME` writes.
func SetCurrentBuildx(dir, key, name string, global bool) error {
	s, err := store.New(confutil.NewConfig(nil, confutil.WithDir(dir)))
	if err != nil {
		return err
	}
	txn, release, err := s.Txn()
	if err != nil {
		return err
	}
	defer release()
	return txn.SetCurrent(key, name, global, false)
}
