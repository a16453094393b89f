package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestPublishReadsTheTagBack: Publish reads the tag back with exactly one
// HEAD after its PUT, and fails with ErrTagChanged when another writer
// tagged it between the two.
func TestPublishReadsTheTagBack(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	repo := regtest.Must(reg.Repo("app"))(t)
	ours, want := pushedIndex(t, repo, "ours")
	theirs, other := pushedIndex(t, repo, "theirs")

	reg.ResetStats()
	if err := New().Publish(ctx, repo.Tag("1"), ours, nil); err != nil {
		t.Fatal(err)
	}
	if st := reg.Stats(); st.Put != 1 || st.Head != 1 || st.Get != 1 || st.Total() != 3 {
		t.Errorf("publish alone: %s; want the ping, the PUT and one HEAD", st)
	}

	race := &regtest.TagRace{Repo: "app", Tag: "2", MediaType: string(theirs.Type), Manifest: theirs.Raw}
	reg.SetMiddleware(race.Middleware)
	err := New().Publish(ctx, repo.Tag("2"), ours, nil)
	if !errors.Is(err, ErrTagChanged) || !race.Raced() {
		t.Fatalf("publish raced by another writer: %v (raced %t), want ErrTagChanged", err, race.Raced())
	}
	reg.SetMiddleware(nil)
	if got, err := New().Head(ctx, repo.Tag("2")); err != nil || got == nil || *got != other {
		t.Fatalf("the tag holds %v (%v), want the other writer's %s", got, err, other)
	}
	if got, _ := New().Head(ctx, repo.Tag("1")); got == nil || *got != want {
		t.Fatalf("tag 1 holds %v, want %s", got, want)
	}
}
