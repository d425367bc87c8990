"""Spatial (3-D) serial chains of rigid and flexible links: the ``spatial`` Model graph.

Modules, each with one job: ``layout`` (q and the constant rows of joint
rotations, motors and springs), ``integrals`` (dimensionless modal
integrals), ``bodies`` (mass properties of a link, symbolic in p, and its
deformed geometry), ``kinematics`` (frames by accumulation), ``templates``
(per-link body equations and frame transfer), ``closed_form`` and
``energy`` (the two derivations of M and h), ``outputs``, ``articulated``
and ``compiled`` (O(N) passes for the C contract), ``parameters``,
``rotations`` (rotation matrices and their rates) and ``chain``
(:class:`~flexfmu.dynamics.spatial.chain.SpatialChain`, the graph the
spatial kind builds its Models on).
"""
