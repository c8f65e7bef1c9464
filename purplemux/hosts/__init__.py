"""Several machines, one view: daemons share their sessions through a Redis broker."""
