"""Planar serial chains of rigid and flexible links: the ``planar`` Model graph.

Modules, each with one job: ``bodies`` (the coordinates q and each link's
mass properties, symbolic in p), ``frames`` (constant Jacobian rows and
forward kinematics), ``closed_form`` and ``energy`` (the two derivations of
M and h), ``outputs``, ``parameters`` (the parameter table),
``articulated`` and ``compiled`` (O(N) passes for the C contract) and
``chain`` (:class:`~flexfmu.dynamics.planar.chain.PlanarChain`, the graph
the planar kind builds its Models on).
"""
