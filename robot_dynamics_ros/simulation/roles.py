"""The roles of the constraint rows of one step: one set of codes for the joint solver (``joint_friction``) and the
contact pattern (``contact_active_set``), so that a pattern means the same in both (no ROS import).

A contact point (3 rows: x, y, normal) sticks, is apart, or slides (lam on the surface of its Coulomb cone). A joint
row bounded by an impulse |lam| <= b (Coulomb friction, a servo drive) holds its velocity inside the box or is at
one of its ends; a stop (lam >= 0) pushes or is idle. The joint solver's per-joint roles name the velocity instead:
a joint sticks (v = 0 held by |lam| <= b), slides, or rests on its lower or upper stop.
"""
# contacts; a joint of the joint solver that is held at zero velocity (STICK) or slides (SLIDE)
STICK, APART, SLIDE = 0, 1, 2
# boxed rows: lam inside the box, at +b, at -b; a joint of the joint solver on its upper or lower stop
INSIDE, AT_UPPER, AT_LOWER = 0, 1, -1
# stops
IDLE, PUSHING = 0, 1
