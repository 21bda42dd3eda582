"""optimizer='ssp': AdaSSP, noisy sufficient statistics and one ridge solve."""
