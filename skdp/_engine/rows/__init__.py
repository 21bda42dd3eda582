"""The data seam: every way the engine reads the private rows, one module per representation.

- :mod:`.host`: validated rows on the host (numpy dense or scipy sparse): row norms in float64
  a block at a time, the per-row rescaling to a public bound, the float32 range check, and the
  move to the compute device;
- :mod:`.sparse` and :mod:`.host_sparse`: CSR rows on the device and on the host, never made
  dense;
- :mod:`.dense`: dense rows on the device (torch tensors);
- :mod:`.kernels`: the operations the models need of a batch of rows (products, squared norms),
  dispatched to the representation: the models are written once;
- :mod:`.training_data`: the rows on the device and the batches a sampler draws from them,
  epoch by epoch.

A new representation (rows in partitions on a cluster, say) implements the same operations and
plugs in here; samplers, row norms and clipped sums do not change elsewhere.
"""
