<?php
// PHP's built-in server runs this for every request to WordPress, then
// serves the file asked for (return false). WordPress's code is Debian's,
// read-only, reached through the tree of links beside this router; its
// wp-config.php is this run's, in that tree: ABSPATH names the tree, so
// that wp-load.php (which Debian's files reach by their real path) reads
// this run's configuration, not Debian's /etc/wordpress.
define('ABSPATH', __DIR__ . '/wp/');
return false;
