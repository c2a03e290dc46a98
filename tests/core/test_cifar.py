"""The CIFAR-10 loader on tiny archives in the real format (pickled dicts of b"data" and
b"labels" in cifar-10-batches-py/data_batch_1..5 and test_batch), its refusals, and where it
looks for the data: a user's path, the data dir (checksum verified), a download when asked."""

import hashlib
import io
import pickle
import tarfile
from pathlib import Path

import numpy as np
import pytest

from siliconbench.core import cifar
from tests.helpers.cifar import batch_bytes, make_archive


def expected_labels(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([batch_bytes(rng, name)[1] for name in cifar.TRAIN_BATCHES])


def test_loads_the_training_set_from_the_archive(tmp_path):
    data = cifar.load(make_archive(tmp_path / "tiny.tar.gz"))
    assert data.images.shape == (200, 3072) and data.images.dtype == np.uint8
    assert data.labels.dtype == np.int64 and np.array_equal(data.labels, expected_labels())
    assert not data.official and data.source.endswith("tiny.tar.gz")


def test_loads_an_extracted_folder_or_its_parent(tmp_path):
    with tarfile.open(make_archive(tmp_path / "tiny.tar.gz")) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    for where in (tmp_path / "x", tmp_path / "x" / cifar.FOLDER):
        data = cifar.load(where)
        assert len(data.labels) == 200 and np.array_equal(data.labels, expected_labels())


class Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_crafted_pickle_cannot_run_code(tmp_path):
    marker = tmp_path / "pwned"
    evil = pickle.dumps({b"data": Payload(marker), b"labels": []}, protocol=2)
    archive = make_archive(tmp_path / "evil.tar.gz", replace={"data_batch_3": evil})
    with pytest.raises(cifar.CifarError, match="has no place in a CIFAR-10 batch"):
        cifar.load(archive)
    assert not marker.exists()


@pytest.mark.parametrize("broken, says", [
    (pickle.dumps({b"data": np.zeros((4, 10), np.uint8), b"labels": [0] * 4}), "pixels"),
    (pickle.dumps({b"data": np.zeros((4, 3072), np.uint8), b"labels": [0, 1, 2, 11]}), "labels"),
    (pickle.dumps({b"pixels": 1}), "is not a CIFAR-10 python archive"),
    (b"not a pickle", "is not a CIFAR-10 python archive"),
])
def test_wrong_contents_are_refused_in_one_sentence(tmp_path, broken, says):
    archive = make_archive(tmp_path / "bad.tar.gz", replace={"data_batch_2": broken})
    with pytest.raises(cifar.CifarError, match=says):
        cifar.load(archive)


def test_not_an_archive_and_missing_paths(tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"hello")
    with pytest.raises(cifar.CifarError, match="not a readable .tar.gz archive"):
        cifar.load(junk)
    with pytest.raises(cifar.CifarError, match="no such file"):
        cifar.load(tmp_path / "nowhere")
    with pytest.raises(cifar.CifarError, match="has no data_batch_1"):
        cifar.load(tmp_path)


def test_without_data_or_permission_to_download_there_is_none():
    data, why = cifar.find(None, allow_download=False)
    assert data is None and "pass --download" in why


def test_the_data_dir_archive_must_have_the_published_checksum():
    cifar.data_dir().mkdir(parents=True)
    make_archive(cifar.data_dir() / cifar.ARCHIVE_NAME)
    data, why = cifar.find(None, allow_download=False)
    assert data is None and "checksum differs" in why


def test_download_keeps_only_the_published_archive(tmp_path, monkeypatch):
    source = make_archive(tmp_path / "served.tar.gz")
    url = source.as_uri()
    target = cifar.data_dir() / cifar.ARCHIVE_NAME
    with pytest.raises(cifar.CifarError, match="is not the CIFAR-10 archive"):
        cifar.download(target, url)
    assert list(cifar.data_dir().iterdir()) == []          # nothing half-written is left

    monkeypatch.setattr(cifar, "URL", url)
    monkeypatch.setattr(cifar, "MD5", hashlib.md5(source.read_bytes()).hexdigest())
    monkeypatch.setattr(cifar, "ARCHIVE_BYTES", source.stat().st_size)   # hashed at its size
    data, why = cifar.find(None, allow_download=True)
    assert why == "" and data.official and len(data.labels) == 200
    assert target.exists()


def test_an_unreachable_download_is_said_not_raised(monkeypatch, tmp_path):
    monkeypatch.setattr(cifar, "URL", (tmp_path / "absent.tar.gz").as_uri())
    data, why = cifar.find(None, allow_download=True)
    assert data is None and "could not be downloaded" in why


def test_synthetic_data_has_the_real_shape():
    data = cifar.synthetic(100)
    assert data.images.shape == (100, 3072) and data.images.dtype == np.uint8
    assert 0 <= data.labels.min() and data.labels.max() < 10 and data.source == "synthetic"


class Allocates:
    """A pickle that asks numpy for an array of a size of its choosing before any check."""

    def __init__(self, via_reconstruct: bool) -> None:
        self.via_reconstruct = via_reconstruct

    def __reduce__(self):
        from numpy._core.multiarray import _reconstruct
        if self.via_reconstruct:
            return (_reconstruct, (np.ndarray, (10**12,), b"b"))
        return (np.ndarray, ((10**12,),))


@pytest.mark.parametrize("broken, says", [
    (pickle.dumps(np.zeros((4, 3072), np.uint8), protocol=2), "holds a ndarray, not a dict"),
    (pickle.dumps({b"data": Allocates(True), b"labels": []}, protocol=2),
     "not in numpy's pickle form"),
    (pickle.dumps({b"data": Allocates(False), b"labels": []}, protocol=2),
     "is not a CIFAR-10 python archive"),
    (pickle.dumps({b"data": np.zeros((4, 3072), np.uint8), b"labels": [2**70] * 4}),
     "is not a CIFAR-10 python archive"),
    (pickle.dumps({b"data": np.zeros((4, 3072), np.uint8), b"labels": [[0]] * 4}),
     "labels"),
])
def test_a_batch_of_the_wrong_shape_is_refused_before_numpy_allocates(tmp_path, broken, says):
    archive = make_archive(tmp_path / "bad.tar.gz", replace={"data_batch_4": broken})
    with pytest.raises(cifar.CifarError, match=says) as e:
        cifar.load(archive)
    assert len(str(e.value)) < 250 and "\n" not in str(e.value)


def test_members_larger_than_a_cifar_batch_are_not_read(tmp_path):
    huge = bytes(cifar.MAX_BATCH_BYTES + 1)
    archive = make_archive(tmp_path / "huge.tar.gz", replace={"data_batch_1": huge})
    with pytest.raises(cifar.CifarError, match="its data_batch_1 is 32 MB, larger than any"):
        cifar.load(archive)
    with tarfile.open(make_archive(tmp_path / "tiny.tar.gz")) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    (tmp_path / "x" / cifar.FOLDER / "data_batch_5").write_bytes(huge)
    with pytest.raises(cifar.CifarError, match="data_batch_5 holds 33,554,433 bytes, more than any"):
        cifar.load(tmp_path / "x")


def test_a_link_member_is_refused_in_our_words(tmp_path):
    path = tmp_path / "link.tar.gz"
    rng = np.random.default_rng(0)
    with tarfile.open(path, "w:gz") as tar:
        for name in cifar.TRAIN_BATCHES:
            if name == "data_batch_2":
                info = tarfile.TarInfo(f"{cifar.FOLDER}/{name}")
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
                continue
            raw = batch_bytes(rng, name)[0]
            info = tarfile.TarInfo(f"{cifar.FOLDER}/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    with pytest.raises(cifar.CifarError) as e:
        cifar.load(path)
    assert str(e.value) == (f"{path} is not the CIFAR-10 python archive: its data_batch_2 is "
                            "not a regular file.")
