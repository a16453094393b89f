package main

import (
	"context"
	"strings"
)

// rebase runs crane rebase once per variant, since crane does not rebase
// an index, each into a tag of the target repository, then merges the
// results with crane index append as the index create case does.
func (t *crane) rebase(ctx context.Context, o rebaseIndex) error {
	repo, _, _ := strings.Cut(o.Target, ":merged")
	args := []string{"--insecure", "index", "append", "-t", o.Target}
	for _, v := range o.Variants {
		tag := repo + ":rebased-" + slug(v.Platform)
		if _, err := t.exec(ctx, "--insecure", "rebase", v.Image, "--old_base", v.OldBase, "--new_base", v.NewBase, "-t", tag); err != nil {
			return err
		}
		args = append(args, "-m", tag)
	}
	_, err := t.exec(ctx, args...)
	return err
}

// rebase runs regctl image mod --rebase once per variant, then merges the
// results with regctl index create. On the index itself `--rebase` fails:
// regctl reads the base annotations of the top manifest only (the index,
// which has none), and one --rebase-ref pair cannot name both a Windows
// and a Linux base.
func (t *regctl) rebase(ctx context.Context, o rebaseIndex) error {
	repo, _, _ := strings.Cut(o.Target, ":merged")
	args := []string{"index", "create", o.Target}
	for _, v := range o.Variants {
		tag := repo + ":rebased-" + slug(v.Platform)
		if _, err := t.exec(ctx, "image", "mod", v.Image, "--rebase", "--create", tag); err != nil {
			return err
		}
		args = append(args, "--ref", tag)
	}
	_, err := t.exec(ctx, args...)
	return err
}
