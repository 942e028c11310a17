"""The package's version, in a module of its own so that what stamps it (a report, an export) need not import the
package's public face."""

__version__ = "0.1.0"
