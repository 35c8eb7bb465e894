/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a file is, from its first bytes: the project's own files and the
 * foreign ones users hand the tools by mistake, each with what to do with it.
 */
#ifndef WSE_FILEKIND_H
#define WSE_FILEKIND_H

enum wse_file_kind {
	WSE_FILE_MISSING,	/* stat or open failed; errno-style code in *err */
	WSE_FILE_DIRECTORY,
	WSE_FILE_EMPTY,
	WSE_FILE_WSEP,		/* a compiled program: "WSEP" */
	WSE_FILE_CHECKPOINT,	/* a wsetrain checkpoint: "WSECKPT\0" */
	WSE_FILE_ONNX,		/* a protobuf ModelProto whose first fields parse */
	WSE_FILE_TORCH_ZIP,	/* torch.save's zip: PK\3\4 holding .../data.pkl */
	WSE_FILE_PICKLE,	/* a Python pickle, protocol 2..5 (old torch.save) */
	WSE_FILE_ZIP,		/* any other zip archive */
	WSE_FILE_IDX,		/* an IDX array whose header matches its size */
	WSE_FILE_GZIP,
	WSE_FILE_TEXT,		/* printable text: a model text file perhaps */
	WSE_FILE_UNKNOWN,
};

#define WSE_FILE_BIT(k)	(1u << (k))

/* Sniff @path; on WSE_FILE_MISSING, *err (if given) holds a positive errno. */
enum wse_file_kind wse_file_kind(const char *path, int *err);

/* "a wse program (.wsep)", "a PyTorch checkpoint (zip)", ... */
const char *wse_file_kind_name(enum wse_file_kind k);

/* What to do with a file of kind @k, one clause. */
const char *wse_file_kind_advice(enum wse_file_kind k);

/*
 * 0 if @path is one of the kinds in @accepted (a mask of WSE_FILE_BIT);
 * else print "TOOL: PATH is KIND, not WANTED: ADVICE" on stderr and
 * return -EINVAL. A missing file, unless accepted, is refused with its
 * errno's text and that errno (-ENOENT, -EACCES, ...).
 */
int wse_file_expect(const char *tool, const char *path, unsigned int accepted,
		    const char *wanted);

#endif
