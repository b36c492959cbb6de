"""The converter's accuracy acceptance: every reference model, converted with the
default settings from 1,000 training images, loses at most its allowed top-1 points
on the 10,000 Fashion-MNIST test images, agrees with the float model on at least its
share of them, is never worse than MRT's scheme (--method mrt) by more than 0.05
points nor in agreement, and converts within 60 s. The accuracy is cvm-lite's own:
the converted model runs in the runtime."""
import pytest

import accuracy
import fmnist

if not fmnist.available():
    pytest.skip("the Fashion-MNIST dataset is not in %s (Debian dataset-fashion-mnist)"
                % fmnist.DATASET_DIR, allow_module_level=True)


@pytest.fixture(scope="module")
def data():
    train_x, _ = fmnist.load("train")
    x, labels = fmnist.load("test")
    return train_x[:accuracy.CALIBRATION_IMAGES], x, labels


@pytest.mark.parametrize("name", sorted(accuracy.LIMITS))
def test_reference_model(name, data):
    calib, x, labels = data
    limits = accuracy.LIMITS[name]
    fp = accuracy.float_predictions(name, x)
    ours = accuracy.measure(name, calib, x, labels, float_pred=fp)
    mrt = accuracy.measure(name, calib, x, labels, method="mrt", float_pred=fp)
    print(accuracy.table([ours, mrt]))
    # The numpy evaluator is the float model: torch measured the same accuracy.
    assert ours["float_top1"] == pytest.approx(
        100 * accuracy.float_accuracy()[name]["top1"], abs=0.02)
    assert ours["images"] == 10000
    assert ours["float_top1"] - ours["cvm_top1"] <= limits["drop"], ours
    assert ours["agreement"] >= limits["agreement"], ours
    assert ours["cvm_top1"] >= mrt["cvm_top1"] - 0.05, (ours, mrt)
    assert ours["agreement"] >= mrt["agreement"], (ours, mrt)
    assert ours["seconds"] <= 60, ours
