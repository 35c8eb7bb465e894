# lib/dataset: libwsedata, IDX datasets of any rank (MNIST, Fashion-MNIST), plain
# or gzipped, and CIFAR-10 batches (wse/dataset.h). Programs linking it also need -lz.
libs += wsedata
wsedata_srcs := lib/dataset/idx.c lib/dataset/dataset.c lib/dataset/cifar10.c lib/dataset/order.c lib/dataset/text.c \
	lib/dataset/text_mlm.c

host_tests += dataset_test
dataset_test_srcs := tests/host/dataset_test.c
dataset_test_libs := wsedata
dataset_test_ldlibs := -lz
