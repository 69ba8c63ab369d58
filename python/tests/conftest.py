"""pytest configuration of ctpipe's Python tests."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "torch_dist: starts several processes that train with PyTorch's pipeline runtime "
        "(torch.distributed, gloo, CPU); deselect with -m 'not torch_dist'",
    )
