package main

import (
	"context"
	"strings"
)

// rebase runs crane rebase once per variant, since crane does not rebase
// an index, each into a tag of the target repository, then merges the
// results with crane index append as the index create case does.
func (t *crane) rebase(ctx context.Context, o rebaseIndex) error {
	args := []string{"--insecure", "index", "append", "-t", o.Target}
	for _, v := range o.Variants {
		tag := variantTag(o.Target, v)
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
	args := []string{"index", "create", o.Target}
	for _, v := range o.Variants {
		tag := variantTag(o.Target, v)
		if _, err := t.exec(ctx, "image", "mod", v.Image, "--rebase", "--create", tag); err != nil {
			return err
		}
		args = append(args, "--ref", tag)
	}
	_, err := t.exec(ctx, args...)
	return err
}

// variantTag is where a peer puts its rebase of one variant before it
// merges them: TARGET-REPO:rebased-<platform>, after the target's tag
// unless that is "merged".
func variantTag(target string, v rebaseVariant) string {
	i := strings.LastIndex(target, ":")
	repo, tag := target[:i], target[i+1:]
	if tag == "merged" {
		tag = ""
	} else {
		tag += "-"
	}
	return repo + ":" + tag + "rebased-" + slug(v.Platform)
}
