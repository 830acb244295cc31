"""The 2-rank DDP smoke: a launcher in the doctor's process (never imports torch),
the rank program (`python -m doctor.smoke.worker`), and the classification of
what the ranks left behind into findings."""
