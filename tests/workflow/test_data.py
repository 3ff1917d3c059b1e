import functools
import hashlib
import http.server
import os
import shutil
import threading

import numpy as np
import pytest

from mkl.datasets import gmkl_toy, smkl_toy
from mkl.workflow.config import load_registry
from mkl.workflow.dataset import Dataset, build_dataset
from mkl.workflow.fetch import DatasetUnavailable, fetch
from mkl.workflow.preprocessing import scale_features
from mkl.workflow.splits import make_splits

from ..conftest import MIRROR, REPO, needs_mirror

REGISTRY = load_registry(REPO / "config" / "datasets.yaml", REPO / "workflow" / "schemas")

# (dataset, shape, class counts) as verified in the mirror's MANIFEST.tsv
EXPECTED = {
    "ionosphere": ((351, 33), [126, 225]),  # 34 columns, the constant one dropped
    "sonar": ((208, 60), [111, 97]),
    "heart": ((270, 13), [150, 120]),
    "pima": ((768, 8), [500, 268]),
    "wdbc": ((569, 30), [357, 212]),
    "wpbc": ((198, 33), [151, 47]),
    "breast": ((683, 10), [444, 239]),
    "breast_uci": ((683, 9), [444, 239]),
    "liver": ((345, 6), [145, 200]),
    "australian": ((690, 14), [383, 307]),
    "german": ((1000, 24), [700, 300]),
    "fourclass": ((862, 2), [555, 307]),
    "splice": ((1000, 60), [483, 517]),
    "iris": ((150, 4), [50, 50, 50]),
    "wine": ((178, 13), [59, 71, 48]),
    "glass": ((214, 9), [70, 76, 17, 13, 9, 29]),
    "vehicle": ((846, 18), [212, 217, 218, 199]),
    "dna": ((3186, 180), [767, 765, 1654]),
    "gmkl_toy1": ((300, 20), None),
    "gmkl_toy2": ((300, 20), None),
    "gmkl_toy1_draws": ((6000, 20), None),
    "gmkl_toy2_draws": ((6000, 20), None),
    "smkl_toy": ((500, 40), None),
    **{f"smkl_toy_d{d}": ((500, d), None) for d in range(34, 40)},
    "mnist_oddeven": ((10000, 784), [4926, 5074]),
    "ohsumed_c01_c02": ((291, 1686), [216, 75]),  # d: the paper's Table 1
    "ohsumed_c05_c06": ((577, 2302), [223, 354]),
    "ohsumed_c12_c13": ((537, 2059), [342, 195]),
    "newsgroups_autos_motorcycles": ((1986, 5341), [990, 996]),
    "newsgroups_baseball_hockey": ((1993, 6311), [994, 999]),
    "colon": ((62, 2000), [22, 40]),
    "leukemia": ((72, 7129), [47, 25]),
    "duke": ((49, 7129), [25, 24]),
    "vowel": ((990, 10), [90] * 11),
    "madelon": ((2000, 500), [1000, 1000]),
    "mnist_test": ((10000, 784), [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]),
    "iris_bin": ((150, 4), [100, 50]),
    "wine_bin": ((178, 13), [107, 71]),
    "glass_bin": ((214, 9), [108, 106]),
    "vehicle_bin": ((846, 18), [417, 429]),
    "vowel_bin": ((990, 10), [540, 450]),
    # the other groupings of lauriola2018_memo_groupings
    "iris_setosa_bin": ((150, 4), [100, 50]),
    "iris_virginica_bin": ((150, 4), [100, 50]),
    "vowel_5to9_bin": ((990, 10), [540, 450]),
    "vowel_even_bin": ((990, 10), [540, 450]),
    "vowel_odd_bin": ((990, 10), [540, 450]),
    "dna_bin": ((2000, 180), [1051, 949]),  # LIBSVM's dna.scale: the first 2000 rows
}
# similarity sets: (number of matrices, n, class counts), from MANIFEST.tsv
EXPECTED_SIMILARITY = {
    "auralsonar": (1, 100, [50, 50]),
    "protein_sim": (1, 213, [72, 72, 39, 30]),
    "voting": (1, 435, [267, 168]),
    "yeast_sw": (1, 200, [100, 100]),
}
NOT_IN_MIRROR = {"amazon", "yeast_sw_5_7", "yeast_sw_5_12", "patrol"}
# regression sets (target: real): shape, smallest and largest target
EXPECTED_REGRESSION = {
    "diabetes": ((442, 10), (25.0, 346.0)),
    "liver_drinks": ((345, 5), (0.0, 20.0)),
}


def test_every_registry_entry_is_tested():
    unavailable = NOT_IN_MIRROR | {"mnist_train", "plant"}
    expected = set(EXPECTED) | set(EXPECTED_SIMILARITY) | set(EXPECTED_REGRESSION)
    assert set(REGISTRY) == expected | unavailable


@pytest.mark.parametrize("name", sorted(EXPECTED_REGRESSION))
def test_regression_sets_keep_their_real_targets(tmp_path, name):
    """diabetes comes from the installed scikit-learn, liver_drinks from the
    mirror (drinks per day regressed on the five blood tests, selector dropped)."""
    if name != "diabetes" and not MIRROR.is_dir():
        pytest.skip("dataset mirror not present")
    fetch(name, REGISTRY[name], tmp_path, mirrors=[MIRROR])
    ds = build_dataset(name, REGISTRY[name], tmp_path)
    shape, (lo, hi) = EXPECTED_REGRESSION[name]
    assert ds.X.shape == shape and ds.y.dtype == np.float64
    assert (ds.y.min(), ds.y.max()) == (lo, hi)
    assert ds.real_target and ds.classes == [] and "class_counts" not in ds.attrs
    ds.save(tmp_path / "d.h5")
    back = Dataset.load(tmp_path / "d.h5")
    assert back.real_target and back.classes == [] and np.array_equal(back.y, ds.y)
    if name == "diabetes":  # scikit-learn's own copy of the same numbers
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True, scaled=False)
        assert np.array_equal(ds.X, X) and np.array_equal(ds.y, y)


def test_real_targets_that_are_not_numbers_are_refused(tmp_path):
    import json

    (tmp_path / "t.csv").write_text("a,b,target\n1,2,x\n3,4,y\n")
    sha = hashlib.sha256((tmp_path / "t.csv").read_bytes()).hexdigest()
    manifest = {"format": "table", "options": {"label_column": "target", "header": True}}
    manifest["files"] = [{"name": "t.csv", "sha256": sha, "url": None}]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    entry = {"title": "t", "target": "real", "sources": []}
    with pytest.raises(ValueError, match="target: real, but the targets are not numbers"):
        build_dataset("t", entry, tmp_path)


def test_gene_sets_get_libsvms_normalisation(tmp_path):
    from mkl.workflow.preprocessing import libsvm_gene_normalisation

    X = np.random.default_rng(0).lognormal(size=(12, 30)) * 1000
    Z = libsvm_gene_normalisation(X)
    assert np.allclose(Z.mean(0), 0) and np.allclose(Z.std(0), 1)
    if MIRROR.is_dir():
        fetch("colon", REGISTRY["colon"], tmp_path, mirrors=[MIRROR])
        ds = build_dataset("colon", REGISTRY["colon"], tmp_path)
        assert np.allclose(ds.X.mean(0), 0) and np.allclose(ds.X.std(0), 1)


def test_idx_parser_refuses_bad_files(tmp_path):
    import gzip
    import struct

    from mkl.workflow.parsers import parse_idx

    images = struct.pack(">IIII", 2051, 2, 2, 2) + bytes(range(8))
    labels = struct.pack(">II", 2049, 2) + bytes([3, 7])
    (tmp_path / "i.gz").write_bytes(gzip.compress(images))
    (tmp_path / "l").write_bytes(labels)
    X, y = parse_idx([tmp_path / "l", tmp_path / "i.gz"])
    assert X.shape == (2, 4) and list(y) == [3, 7] and X[1, 3] == 7
    (tmp_path / "t").write_bytes(images[:-1])
    with pytest.raises(ValueError, match="truncated"):
        parse_idx([tmp_path / "t", tmp_path / "l"])
    (tmp_path / "m").write_bytes(struct.pack(">II", 1234, 2))
    with pytest.raises(ValueError, match="magic 1234"):
        parse_idx([tmp_path / "m", tmp_path / "l"])


@needs_mirror()
@pytest.mark.parametrize("name", sorted(EXPECTED_SIMILARITY))
def test_similarity_parser_on_mirror_file(tmp_path, name):
    fetch(name, REGISTRY[name], tmp_path, mirrors=[MIRROR])
    ds = build_dataset(name, REGISTRY[name], tmp_path)
    m, n, counts = EXPECTED_SIMILARITY[name]
    assert ds.S.shape == (m, n, n) and ds.X.shape == (n, 0)
    assert np.bincount(ds.y).tolist() == counts
    assert np.array_equal(ds.S, ds.S.transpose(0, 2, 1))
    assert np.linalg.eigvalsh(ds.S[0]).min() < 0  # indefinite, as the manifest says
    path = tmp_path / "ds.h5"
    ds.save(path)
    back = type(ds).load(path)
    assert np.array_equal(back.S, ds.S) and back.similarity_names == ds.similarity_names


@pytest.mark.parametrize("name", sorted(NOT_IN_MIRROR))
def test_similarity_sets_not_in_the_mirror_fail_with_their_source(tmp_path, name):
    with pytest.raises(DatasetUnavailable, match="canonical source: http://idl.ee.washington"):
        fetch(name, REGISTRY[name], tmp_path / "raw", mirrors=[tmp_path])
    assert not (tmp_path / "raw" / "manifest.json").exists()


def test_a_dataset_known_only_by_its_page_fails_naming_it(tmp_path):
    with pytest.raises(DatasetUnavailable) as err:
        fetch("plant", REGISTRY["plant"], tmp_path / "raw", mirrors=[tmp_path])
    assert "no copy is known" in str(err.value)
    assert "canonical source: http://www.fml.tuebingen.mpg.de/raetsch/suppl/protsubloc" in str(
        err.value
    )
    assert not (tmp_path / "raw" / "manifest.json").exists()


@needs_mirror()
def test_text_documents_are_unit_length_term_frequencies(tmp_path):
    from mkl.workflow.parsers import parse_text_archive

    archive = MIRROR / "20newsgroups" / "20news-bydate_rec4.tar.gz"
    classes = {
        "autos": ["20news-bydate-test/rec.autos"],
        "motorcycles": ["20news-bydate-test/rec.motorcycles/"],  # a trailing slash is fine
    }
    X, y = parse_text_archive([archive], classes, strip_header=True, min_df=3)
    assert list(np.unique(y, return_counts=True)[1]) == [396, 398]
    assert X.min() >= 0 and np.allclose(np.linalg.norm(X[X.any(1)], axis=1), 1.0)
    assert ((X > 0).sum(0) >= 3).all()  # every term in at least min_df documents
    X5, _ = parse_text_archive([archive], classes, strip_header=True, max_features=50)
    assert X5.shape == (794, 50)
    with pytest.raises(ValueError, match="no documents under"):
        parse_text_archive([archive], {"a": ["20news-bydate-test/rec.autos"], "b": ["nowhere"]})
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"not a tar archive at all")
    with pytest.raises(ValueError, match="not a readable tar archive"):
        parse_text_archive([bad], classes)


def test_a_text_vocabulary_is_the_terms_in_most_documents_ties_alphabetical(tmp_path):
    import io
    import tarfile

    from mkl.workflow.parsers import parse_text_archive

    # document frequencies: zebra 3, kiwi 2, mango 2, apple 1 (but 4 occurrences)
    docs = {
        "a/1": "apple apple apple apple zebra",
        "a/2": "zebra mango",
        "b/3": "mango kiwi",
        "b/4": "zebra kiwi",
    }
    archive = tmp_path / "docs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in docs.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    classes = {"a": ["a"], "b": ["b"]}
    X, y = parse_text_archive([archive], classes)
    assert X.shape == (4, 4) and list(y) == ["a", "a", "b", "b"]  # apple kiwi mango zebra
    # the most frequent by occurrences would be apple and zebra; by documents it
    # is zebra, then kiwi before mango (a tie, broken alphabetically)
    X2, _ = parse_text_archive([archive], classes, max_features=2)  # kiwi, zebra
    s = np.sqrt(0.5)
    np.testing.assert_allclose(X2, [[0, 1], [0, 1], [1, 0], [s, s]])
    X1, _ = parse_text_archive([archive], classes, max_features=1)  # zebra
    np.testing.assert_allclose(X1, [[1], [1], [0], [1]])
    with pytest.raises(ValueError, match="max_features must be >= 1"):
        parse_text_archive([archive], classes, max_features=0)


def test_several_similarity_matrices_over_the_same_examples(tmp_path):
    import scipy.io

    from mkl.workflow.parsers import parse_mat_similarity

    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    labels = np.array([[1], [1], [2], [2], [1], [2]])
    scipy.io.savemat(tmp_path / "a.mat", {"A": A + A.T, "B": A @ A.T, "C": labels})
    scipy.io.savemat(tmp_path / "b.mat", {"A": np.eye(6), "C": labels})
    S, y, names = parse_mat_similarity([tmp_path / "a.mat"], similarity=["A", "B"])
    assert S.shape == (2, 6, 6) and names == ["a:A", "a:B"] and list(y) == labels.ravel().tolist()
    S, _, names = parse_mat_similarity([tmp_path / "a.mat", tmp_path / "b.mat"])
    assert S.shape == (2, 6, 6) and names == ["a:A", "b:A"]
    scipy.io.savemat(tmp_path / "c.mat", {"A": np.eye(6), "C": labels[::-1]})
    with pytest.raises(ValueError, match="labels differ"):
        parse_mat_similarity([tmp_path / "a.mat", tmp_path / "c.mat"])
    with pytest.raises(ValueError, match="no variable 'D'"):
        parse_mat_similarity([tmp_path / "a.mat"], similarity="D")
    (tmp_path / "bad.mat").write_bytes(b"not a mat file")
    with pytest.raises(ValueError, match="not a readable MATLAB file"):
        parse_mat_similarity([tmp_path / "bad.mat"])


@needs_mirror()
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parser_on_mirror_file(tmp_path, name):
    fetch(name, REGISTRY[name], tmp_path, mirrors=[MIRROR])
    ds = build_dataset(name, REGISTRY[name], tmp_path)
    shape, counts = EXPECTED[name]
    assert ds.X.shape == shape
    if counts is not None:
        assert np.bincount(ds.y).tolist() == counts
    assert np.isfinite(ds.X).all()
    assert ds.attrs["dataset"] == name


@needs_mirror()
@pytest.mark.parametrize("name", ["ionosphere", "sonar"])
def test_resources_hold_the_quick_experiments_files(tmp_path, name):
    manifest = fetch(name, REGISTRY[name], tmp_path, mirrors=[REPO / "resources" / "datasets"])
    assert manifest["files"][0]["sha256"] == REGISTRY[name]["sources"][0]["sha256"]


def test_wdbc_comes_from_the_installed_scikit_learn(tmp_path):
    manifest = fetch("wdbc", REGISTRY["wdbc"], tmp_path, mirrors=[])
    assert manifest["format"] == "sklearn_csv"
    assert build_dataset("wdbc", REGISTRY["wdbc"], tmp_path).classes == ["benign", "malignant"]


# ------------------------------------------------------------------ downloads
@pytest.fixture(scope="module")
def http_mirror():
    """A local HTTP server on 127.0.0.1 serving the dataset mirror."""
    if not MIRROR.is_dir():
        pytest.skip("dataset mirror not present")
    handler = functools.partial(QuietHandler, directory=str(MIRROR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def entry_with_url(url, sha256):
    return {"title": "t", "sources": [{"format": "pmlb", "url": url, "sha256": sha256}]}


SONAR_SHA = REGISTRY["sonar"]["sources"][0]["sha256"]


def test_download_over_http(tmp_path, http_mirror):
    entry = entry_with_url(f"{http_mirror}/sonar/pmlb_sonar.tsv.gz", SONAR_SHA)
    manifest = fetch("sonar", entry, tmp_path, mirrors=[])
    data = (tmp_path / "pmlb_sonar.tsv.gz").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SONAR_SHA
    assert manifest["files"][0]["url"].startswith("http://127.0.0.1")
    assert build_dataset("sonar", entry, tmp_path).X.shape == (208, 60)


def test_checksum_mismatch_is_clear_and_leaves_no_file(tmp_path, http_mirror):
    entry = entry_with_url(f"{http_mirror}/sonar/pmlb_sonar.tsv.gz", "0" * 64)
    with pytest.raises(DatasetUnavailable) as err:
        fetch("sonar", entry, tmp_path, mirrors=[])
    msg = str(err.value)
    assert "dataset 'sonar' is not available" in msg and "sha256 mismatch" in msg
    assert "\n" not in msg
    assert os.listdir(tmp_path) == []  # no partial download, no manifest


def test_unreachable_url_and_missing_mirror_are_named(tmp_path):
    entry = entry_with_url("http://127.0.0.1:9/nothing.tsv.gz", SONAR_SHA)
    entry["sources"][0]["mirror"] = "sonar/missing.tsv.gz"
    with pytest.raises(DatasetUnavailable) as err:
        fetch("sonar", entry, tmp_path, mirrors=[tmp_path / "m"], timeout=2)
    msg = str(err.value)
    assert "http://127.0.0.1:9/nothing.tsv.gz" in msg
    assert str(tmp_path / "m" / "sonar" / "missing.tsv.gz") + ": not found" in msg
    assert os.listdir(tmp_path) == []


@needs_mirror()
def test_mirror_is_tried_before_the_url_and_a_bad_copy_falls_through(tmp_path, http_mirror):
    bad_mirror = tmp_path / "bad"
    (bad_mirror / "sonar").mkdir(parents=True)
    (bad_mirror / "sonar" / "pmlb_sonar.tsv.gz").write_bytes(b"corrupt")
    entry = entry_with_url(f"{http_mirror}/sonar/pmlb_sonar.tsv.gz", SONAR_SHA)
    entry["sources"][0]["mirror"] = "sonar/pmlb_sonar.tsv.gz"
    out = tmp_path / "out"
    fetch("sonar", entry, out, mirrors=[bad_mirror])  # corrupt mirror copy -> URL
    assert hashlib.sha256((out / "pmlb_sonar.tsv.gz").read_bytes()).hexdigest() == SONAR_SHA


def test_unavailable_registry_entry_without_network(tmp_path):
    entry = {
        "title": "t",
        "sources": [
            {
                "format": "pmlb",
                "canonical_url": "x",
                "sha256": "a" * 64,
                "mirror": "nowhere/file.gz",
            }
        ],
    }
    with pytest.raises(DatasetUnavailable, match="dataset 'ghost' is not available: tried"):
        fetch("ghost", entry, tmp_path, mirrors=[tmp_path])


@needs_mirror()
def test_corrupted_raw_file_is_detected_before_parsing(tmp_path):
    fetch("sonar", REGISTRY["sonar"], tmp_path, mirrors=[MIRROR])
    (tmp_path / "pmlb_sonar.tsv.gz").write_bytes(b"truncated")
    with pytest.raises(ValueError, match="does not match its sha256"):
        build_dataset("sonar", REGISTRY["sonar"], tmp_path)


# ------------------------------------------------------------------ splits and scaling
def test_splits_are_seeded_stratified_and_disjoint():
    y = np.array([0] * 60 + [1] * 40)
    a = make_splits(y, 5, 0.5, 3, seed=7)
    b = make_splits(y, 5, 0.5, 3, seed=7)
    c = make_splits(y, 5, 0.5, 3, seed=8)
    assert all(np.array_equal(s.train, t.train) for s, t in zip(a, b, strict=True))
    assert not all(np.array_equal(s.train, t.train) for s, t in zip(a, c, strict=True))
    for s in a:
        assert len(np.intersect1d(s.train, s.test)) == 0 and len(s.train) + len(s.test) == 100
        assert np.bincount(y[s.train]).tolist() == [30, 20]
        assert sorted(np.unique(s.folds)) == [0, 1, 2]
        for k in range(3):
            counts = np.bincount(y[s.train][s.folds == k], minlength=2)
            assert abs(counts[0] - 10) <= 1 and abs(counts[1] - 20 / 3) <= 1
    assert len({tuple(s.train) for s in a}) == 5


def test_splits_of_real_targets_are_shuffled_not_stratified():
    y = np.linspace(0.0, 1.0, 50)
    a = make_splits(y, 4, 0.6, 3, seed=3, stratified=False)
    b = make_splits(y, 4, 0.6, 3, seed=3, stratified=False)
    assert all(np.array_equal(s.train, t.train) for s, t in zip(a, b, strict=True))
    assert len({tuple(s.train) for s in a}) == 4
    for s in a:
        assert len(s.train) == 30 and len(s.test) == 20
        assert len(np.intersect1d(s.train, s.test)) == 0
        assert np.bincount(s.folds).tolist() == [10, 10, 10]
    with pytest.raises(ValueError, match="balanced_classes needs classes"):
        make_splits(y, 1, 0.5, 2, 0, balanced=True, stratified=False)
    with pytest.raises(ValueError, match="fewer than inner_folds=5"):
        make_splits(y[:6], 1, 0.5, 5, 0, stratified=False)


def test_fresh_draws_split_each_draw_alone():
    # 4 draws of 30 points: split r holds points of draw r only, stratified in it
    y = np.tile(np.array([0] * 18 + [1] * 12), 4)
    splits = make_splits(y, 4, 0.5, 3, seed=5, fresh_draws=True)
    for r, s in enumerate(splits):
        both = np.concatenate([s.train, s.test])
        assert np.array_equal(np.sort(both), np.arange(30 * r, 30 * (r + 1)))
        assert np.bincount(y[s.train]).tolist() == [9, 6]
        assert sorted(np.unique(s.folds)) == [0, 1, 2]
    # the same seeds as without draws: draw r is cut as a lone sample would be
    alone = make_splits(y[:30], 4, 0.5, 3, seed=5)
    for r, s in enumerate(splits):
        assert np.array_equal(s.train - 30 * r, alone[r].train)
        assert np.array_equal(s.folds, alone[r].folds)
    # and for a regression's real targets
    real = make_splits(np.linspace(0, 1, 40), 2, 0.5, 2, 0, stratified=False, fresh_draws=True)
    assert real[1].train.min() >= 20 and real[0].test.max() < 20
    with pytest.raises(ValueError, match="fresh_draws needs .* not a multiple of 7"):
        make_splits(y, 7, 0.5, 3, 0, fresh_draws=True)


def test_split_errors_are_named():
    with pytest.raises(ValueError, match="train_fraction must be in"):
        make_splits(np.array([0, 1] * 10), 1, 1.5, 2, 0)
    with pytest.raises(ValueError, match="fewer than inner_folds=5"):
        make_splits(np.array([0] * 20 + [1] * 4), 1, 0.5, 5, 0)


def test_scaling_uses_training_statistics(rng):
    Xtr, Xte = rng.normal(3, 2, size=(50, 3)), rng.normal(3, 2, size=(20, 3))
    Xtr[:, 2] = 1.0
    a, b = scale_features(Xtr, Xte, "standardise")
    assert np.allclose(a[:, :2].mean(0), 0) and np.allclose(a[:, :2].std(0), 1)
    assert np.allclose(b, (Xte - Xtr.mean(0)) / np.where(Xtr.std(0) > 0, Xtr.std(0), 1))
    assert np.all(a[:, 2] == 0)
    a, b = scale_features(Xtr, Xte, "minmax")
    assert np.allclose(a[:, :2].min(0), 0) and np.allclose(a[:, :2].max(0), 1)
    assert np.all(a[:, 2] == 0)
    c, d = scale_features(Xtr, Xte, "minmax_symmetric")  # [0, 1] mapped affinely to [-1, 1]
    assert np.allclose(c[:, :2].min(0), -1) and np.allclose(c[:, :2].max(0), 1)
    assert np.allclose(c[:, :2], 2 * a[:, :2] - 1) and np.allclose(d[:, :2], 2 * b[:, :2] - 1)
    assert np.all(c[:, 2] == 0)
    with pytest.raises(ValueError, match="unknown feature scaling"):
        scale_features(Xtr, Xte, "zscore")


def test_generators_follow_the_papers():
    X, y = gmkl_toy(1, n=2000, seed=0)
    assert X.shape == (2000, 20) and X.min() >= 0 and X.max() <= 1
    f1 = -2 * np.sin(2 * X[:, :3]) + 1 - np.cos(2)
    agree = np.mean(np.sign(f1.sum(1)) == y)
    assert 0.7 < agree < 0.95  # the label follows the signal, blurred by N(0, 1) noise
    X2, y2 = gmkl_toy(2, n=300, seed=0)
    assert X2.shape == (300, 20) and set(y2) == {-1, 1}
    X3, y3 = smkl_toy()
    assert X3.shape == (500, 40)
    assert np.array_equal(y3, np.where(X3[:, :34].mean(1) >= 0, 1, -1))
    # Figure 1's variants: the same points and labels, the last irrelevant features gone
    X4, y4 = smkl_toy(drop_irrelevant=6)
    assert np.array_equal(X4, X3[:, :34]) and np.array_equal(y4, y3)
    with pytest.raises(ValueError, match="drop_irrelevant"):
        smkl_toy(drop_irrelevant=7)
    with pytest.raises(ValueError, match="must be 1 or 2"):
        gmkl_toy(3)


@needs_mirror()
def test_fetch_never_writes_into_a_mirror(tmp_path):
    m = tmp_path / "mirror" / "sonar"
    m.mkdir(parents=True)
    shutil.copy(MIRROR / "sonar" / "pmlb_sonar.tsv.gz", m)
    fetch("sonar", REGISTRY["sonar"], tmp_path / "out", mirrors=[tmp_path / "mirror"])
    assert os.listdir(m) == ["pmlb_sonar.tsv.gz"]
    assert (tmp_path / "out" / "pmlb_sonar.tsv.gz").read_bytes() == (
        m / "pmlb_sonar.tsv.gz"
    ).read_bytes()


def test_balanced_splits_hold_equal_class_counts():
    y = np.array([0] * 30 + [1] * 11 + [2] * 17)
    splits = make_splits(y, 3, 0.7, 3, seed=5, balanced=True)
    for sp in splits:
        assert np.bincount(y[sp.train]).tolist() == [8, 8, 8]
        assert np.bincount(y[sp.test]).tolist() == [3, 3, 3]
        assert not set(sp.train) & set(sp.test)
    again = make_splits(y, 3, 0.7, 3, seed=5, balanced=True)
    assert all(np.array_equal(a.train, b.train) for a, b in zip(splits, again, strict=True))
    assert not np.array_equal(splits[0].train, splits[1].train)


@needs_mirror()
@pytest.mark.parametrize(
    "multiclass, groupings",
    [
        ("iris", {"iris_bin": [1], "iris_setosa_bin": [0], "iris_virginica_bin": [2]}),
        (
            "vowel",
            {
                "vowel_bin": [0, 1, 2, 3, 4],  # the balanced_binary rule (none separable)
                "vowel_5to9_bin": [5, 6, 7, 8, 9],
                "vowel_even_bin": [0, 2, 4, 6, 8],
                "vowel_odd_bin": [1, 3, 5, 7, 9],
            },
        ),
    ],
)
def test_sensitivity_groupings_are_the_stated_classes_against_the_rest(
    tmp_path, multiclass, groupings
):
    """lauriola2018_memo_groupings: each binary set is its multiclass set's
    rows and features, positive exactly on the classes its entry names."""
    fetch(multiclass, REGISTRY[multiclass], tmp_path / multiclass, mirrors=[MIRROR])
    whole = build_dataset(multiclass, REGISTRY[multiclass], tmp_path / multiclass)
    for name, positive in groupings.items():
        fetch(name, REGISTRY[name], tmp_path / name, mirrors=[MIRROR])
        ds = build_dataset(name, REGISTRY[name], tmp_path / name)
        np.testing.assert_array_equal(ds.X, whole.X)
        np.testing.assert_array_equal(ds.y, np.isin(whole.y, positive).astype(int))


def test_balanced_binary_picks_the_class_set_closest_to_half():
    from mkl.workflow.preprocessing import balanced_binary_classes, map_labels

    assert balanced_binary_classes([70, 76, 17, 13, 9, 29]) == [1, 2, 3]  # 106 of 214
    assert balanced_binary_classes([90] * 11) == [0, 1, 2, 3, 4]
    assert balanced_binary_classes([10, 10]) == [0]
    y, names = map_labels(np.array(["a"] * 3 + ["b"] * 5 + ["c"] * 2), {"balanced_binary": True})
    assert names == ["rest", "b"] and y.tolist() == [0, 0, 0, 1, 1, 1, 1, 1, 0, 0]
    with pytest.raises(ValueError, match="at least two classes"):
        balanced_binary_classes([5])


def test_linear_separability_is_a_hyperplane_with_margin_on_every_row():
    from mkl.workflow.preprocessing import linearly_separable

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 3)) + 5, rng.normal(size=(20, 3)) - 5])
    y = np.arange(40) < 20
    assert linearly_separable(X, y)
    assert linearly_separable(X * [1e-3, 7, -2] + 100, y)  # any affine rescaling of the features
    assert not linearly_separable(X, np.arange(40) % 2 == 0)
    xor = np.array([[0.0, 0], [1, 1], [0, 1], [1, 0]])
    assert not linearly_separable(xor, np.array([True, True, False, False]))


def test_balanced_binary_ties_pass_over_linearly_separable_groupings():
    """ties: not_linearly_separable (lauriola2018_memo's *_bin sets): among the
    class sets equally close to half, those a hyperplane separates from the rest
    are skipped, then the lowest indices win; a unique closest set is kept even
    when separable (wine's)."""
    from mkl.workflow.preprocessing import balanced_binary_classes, map_labels

    assert balanced_binary_classes([50, 50, 50], lambda classes: classes == [0]) == [1]
    assert balanced_binary_classes([50, 50, 50], lambda classes: classes != [0, 1]) == [0, 1]
    assert balanced_binary_classes([59, 71, 48], lambda classes: True) == [1]  # no tie
    with pytest.raises(ValueError, match="every class set closest to half"):
        balanced_binary_classes([50, 50, 50], lambda classes: True)
    # class a lies apart from b and c, which overlap: a against the rest is passed over
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(10, 2)) + [20, 0], rng.normal(size=(20, 2))])
    raw = np.array(["a"] * 10 + ["b", "c"] * 10)
    spec = {"balanced_binary": True, "ties": "not_linearly_separable"}
    y, names = map_labels(raw, spec, features=X)
    assert names == ["rest", "b"] and np.array_equal(y, (raw == "b").astype(int))
    assert map_labels(raw, {"balanced_binary": True})[1] == ["rest", "a"]  # the tie rule alone
    with pytest.raises(ValueError, match="needs the features"):
        map_labels(raw, spec)
    with pytest.raises(ValueError, match="unknown balanced_binary ties rule"):
        map_labels(raw, {"balanced_binary": True, "ties": "random"}, features=X)


@needs_mirror()
def test_iris_bin_is_versicolor_against_the_rest_because_setosa_is_separable(tmp_path):
    """The three iris classes are 50 each: setosa (the lowest index) against the
    rest is linearly separable, which the paper's 89% linear kernel rules out;
    versicolor and virginica against the rest are not separable."""
    from mkl.workflow.preprocessing import linearly_separable

    fetch("iris", REGISTRY["iris"], tmp_path / "iris", mirrors=[MIRROR])
    iris = build_dataset("iris", REGISTRY["iris"], tmp_path / "iris")
    assert [linearly_separable(iris.X, iris.y == k) for k in range(3)] == [True, False, False]
    fetch("iris_bin", REGISTRY["iris_bin"], tmp_path / "bin", mirrors=[MIRROR])
    binary = build_dataset("iris_bin", REGISTRY["iris_bin"], tmp_path / "bin")
    assert binary.classes == ["rest", "versicolor"]
    np.testing.assert_array_equal(binary.y, (iris.y == 1).astype(int))


def test_first_rows_keeps_the_leading_examples_before_the_labels_are_mapped(tmp_path):
    import json

    rows = "".join(f"{i},{-i},{i % 3}\n" for i in range(9))
    (tmp_path / "t.csv").write_text("a,b,target\n" + rows)
    sha = hashlib.sha256((tmp_path / "t.csv").read_bytes()).hexdigest()
    manifest = {"format": "table", "options": {"label_column": "target", "header": True}}
    manifest["files"] = [{"name": "t.csv", "sha256": sha, "url": None}]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    entry = {"title": "t", "sources": [], "first_rows": 5, "labels": {"balanced_binary": True}}
    ds = build_dataset("t", entry, tmp_path)
    np.testing.assert_array_equal(ds.X[:, 0], np.arange(5))
    # classes 0, 1, 2 counted 2, 2, 1 over the five rows: class 0 (2 of 5) is closest to half
    assert ds.classes == ["rest", "0"] and ds.y.tolist() == [1, 0, 0, 1, 0]
    assert ds.attrs["first_rows"] == 5
    with pytest.raises(ValueError, match="first_rows 10 outside 1..9"):
        build_dataset("t", {**entry, "first_rows": 10}, tmp_path)


@needs_mirror()
def test_dna_bin_is_libsvms_dna_scale_the_first_2000_rows(tmp_path):
    """LIBSVM's dna.scale (the paper's 2000 x 180) is Statlog's training part:
    PMLB's first 2000 rows (a copy of dna.scale matched them row for row,
    2026-11-28), with Statlog's training class counts 464/485/1051; the
    grouping stays classes 1 and 2 (the two junction types) against 3."""
    fetch("dna", REGISTRY["dna"], tmp_path / "dna", mirrors=[MIRROR])
    whole = build_dataset("dna", REGISTRY["dna"], tmp_path / "dna")
    fetch("dna_bin", REGISTRY["dna_bin"], tmp_path / "bin", mirrors=[MIRROR])
    ds = build_dataset("dna_bin", REGISTRY["dna_bin"], tmp_path / "bin")
    assert np.bincount(whole.y[:2000]).tolist() == [464, 485, 1051]
    np.testing.assert_array_equal(ds.X, whole.X[:2000])
    assert ds.classes == ["rest", "1+2"]
    np.testing.assert_array_equal(ds.y, np.isin(whole.y[:2000], [0, 1]).astype(int))


# ================================================================== the table parser's errors
@pytest.mark.parametrize(
    "text, options, message",
    [
        (
            "age,bmi,label\n1,2,x\n3,4,y\n",
            {"header": True, "label_column": "lable"},
            r"no column named 'lable' for label_column \(did you mean 'label'\?\); the header "
            r"names 'age', 'bmi', 'label'",
        ),
        (
            "1,2,x\n3,4,y\n",
            {"label_column": "label"},
            r"label_column 'label' is a name, but the table is read without a header",
        ),
        ("1,2,x\n3,4,y\n", {"label_column": 5}, r"label_column 5 is not a column: the table has 3"),
        (
            "age,bmi,label\n1,2,x\n3,n/a,y\n",
            {"header": True},
            r"feature column named 'bmi' holds an empty or NA-like field .* in row 1, line 3 of "
            r"the file; if it marks a missing value, set the source's options missing: 'NA'",
        ),
        (
            "age,bmi,label\n1,2,x\n3,unknown,y\n",
            {"header": True},
            r"feature column named 'bmi' holds 'unknown' in row 1, line 3 of the file; .* missing: "
            r"'unknown' .* missing_policy: drop",
        ),
        (
            "age,bmi,label\n1,2,x\n3,4,y\n",
            {},
            r"feature column 0 \(from 0\) holds 'age' in row 0, line 1 of the file; if the "
            r"first line names the columns, set the source's options header: true",
        ),
        (
            "age,bmi,label\n1,?,x\n3,unknown,y\n",
            {"header": True, "missing": "?"},
            r"feature column named 'bmi' holds 'unknown' in row 1, line 3 of the file; "
            r"values other than missing: '\?'",
        ),
    ],
    ids=["misspelt label", "name without header", "index", "n/a", "text", "header", "missing"],
)
def test_the_table_parser_names_the_bad_column_and_the_option_to_set(
    tmp_path, text, options, message
):
    """Issue 60: a misspelt label_column was a bare KeyError, and "n/a" in a
    feature column an error naming neither row nor column nor ``missing``."""
    from mkl.workflow.parsers import parse_table

    path = tmp_path / "mine.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^{path}: {message}"):
        parse_table([path], **options)
    if options.get("label_column") == "lable":
        X, y = parse_table([path], header=True, label_column="label")
        assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and y.tolist() == ["x", "y"]
