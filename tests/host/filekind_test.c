// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/cli/filekind.c on real files: every ONNX model of the corpus is known
 * by its structure, its IDX files by their header, and the magic of the
 * project's own files and of PyTorch's, zip and gzip; a TensorProto (.pb)
 * or an IDX header that disagrees with its size is not taken for either.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/filekind.h"
#include "test_files.h"

#define CORPUS "tests/corpus/onnx"

FIXTURE(kind) {
	char dir[64];
	char path[PATH_MAX];
};

FIXTURE_SETUP(kind)
{
	strcpy(self->dir, "/tmp/filekind_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(kind)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

static enum wse_file_kind kind_of(FIXTURE_DATA(kind) *self, const char *name,
				  const void *b, size_t n)
{
	FILE *f;

	snprintf(self->path, sizeof(self->path), "%s/%s", self->dir, name);
	f = fopen(self->path, "wb");
	if (!f || (n && fwrite(b, 1, n, f) != n) || fclose(f))
		abort();
	return wse_file_kind(self->path, NULL);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

TEST_F(kind, corpus_onnx_and_idx)
{
	DIR *d = opendir(CORPUS);
	struct dirent *e;
	char p[PATH_MAX];
	int onnx = 0, idx = 0;

	ASSERT_NE(NULL, d) TH_LOG("run from the repository root");
	while ((e = readdir(d))) {
		snprintf(p, sizeof(p), CORPUS "/%s", e->d_name);
		if (ends_with(e->d_name, ".onnx")) {
			EXPECT_EQ(WSE_FILE_ONNX, wse_file_kind(p, NULL)) TH_LOG("%s", p);
			onnx++;
		} else if (ends_with(e->d_name, ".idx")) {
			EXPECT_EQ(WSE_FILE_IDX, wse_file_kind(p, NULL)) TH_LOG("%s", p);
			idx++;
		} else if (ends_with(e->d_name, ".pb")) {
			/* A TensorProto: protobuf, but not a ModelProto. */
			EXPECT_NE(WSE_FILE_ONNX, wse_file_kind(p, NULL)) TH_LOG("%s", p);
		}
	}
	closedir(d);
	EXPECT_LT(5, onnx);
	EXPECT_LT(0, idx);
}

TEST_F(kind, magic)
{
	static const char pt[] = "PK\3\4\24\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				 "\20\0\0\0archive/data.pkl";
	static const char zip[] = "PK\3\4\24\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				  "\10\0\0\0notes.md";
	/* 2 x 3 unsigned bytes, then a header that claims one more than it has. */
	static const unsigned char idx[] = { 0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6 };
	int err = 0;

	EXPECT_EQ(WSE_FILE_TORCH_ZIP, kind_of(self, "m.pt", pt, sizeof(pt) - 1));
	EXPECT_EQ(WSE_FILE_ZIP, kind_of(self, "a.zip", zip, sizeof(zip) - 1));
	EXPECT_EQ(WSE_FILE_PICKLE, kind_of(self, "o.pt", "\x80\x04\x95", 3));
	EXPECT_EQ(WSE_FILE_GZIP, kind_of(self, "d.gz", "\x1f\x8b\x08\0", 4));
	EXPECT_EQ(WSE_FILE_WSEP, kind_of(self, "p.wsep", "WSEP\1\0\0\0", 8));
	EXPECT_EQ(WSE_FILE_CHECKPOINT, kind_of(self, "c.ckpt", "WSECKPT\0\1\0", 10));
	EXPECT_EQ(WSE_FILE_IDX, kind_of(self, "x.idx", idx, sizeof(idx)));
	EXPECT_NE(WSE_FILE_IDX, kind_of(self, "y.idx", idx, sizeof(idx) - 1));
	EXPECT_EQ(WSE_FILE_TEXT, kind_of(self, "m.txt", "model m\ninput 784\n", 18));
	EXPECT_EQ(WSE_FILE_EMPTY, kind_of(self, "e", "", 0));
	EXPECT_EQ(WSE_FILE_UNKNOWN, kind_of(self, "r", "\xff\x13\x00\x9a\x41", 5));
	EXPECT_EQ(WSE_FILE_DIRECTORY, wse_file_kind(self->dir, NULL));
	EXPECT_EQ(WSE_FILE_MISSING, wse_file_kind("/nonexistent/x", &err));
	EXPECT_EQ(ENOENT, err);
}

TEST_F(kind, expect_says_what_and_what_to_do)
{
	static const char pt[] = "PK\3\4\24\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				 "\20\0\0\0archive/data.pkl";

	kind_of(self, "model.pt", pt, sizeof(pt) - 1);
	EXPECT_EQ(-EINVAL, wse_file_expect("t", self->path, WSE_FILE_BIT(WSE_FILE_ONNX), "a model"));
	EXPECT_EQ(0, wse_file_expect("t", self->path, WSE_FILE_BIT(WSE_FILE_TORCH_ZIP), "a .pt"));
	EXPECT_NE(NULL, strstr(wse_file_kind_advice(WSE_FILE_TORCH_ZIP), "torch.onnx.export"));
	EXPECT_EQ(-ENOENT, wse_file_expect("t", "/nonexistent/x", WSE_FILE_BIT(WSE_FILE_ONNX), "a model"));
	EXPECT_EQ(0, wse_file_expect("t", "/nonexistent/x", WSE_FILE_BIT(WSE_FILE_MISSING), "a model"));
}

TEST_HARNESS_MAIN
