<?php
// PHP's built-in server runs this for every request to DokuWiki: the
// configuration (and through it the data) is this run's, in the directory
// this router was copied to; DokuWiki's code is Debian's, read-only.
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path === '/' || $path === '') {
    $path = '/doku.php';
}
$file = realpath('/usr/share/dokuwiki' . $path);
if ($file === false || strpos($file, '/usr/share/dokuwiki/') !== 0 && strpos($file, '/var/lib/dokuwiki/lib/') !== 0) {
    http_response_code(404);
    return true;
}
if (substr($file, -4) !== '.php') {
    return false; // static files, served by the built-in server
}
define('DOKU_CONF', __DIR__ . '/conf/');
$_SERVER['SCRIPT_NAME'] = $path;
$_SERVER['PHP_SELF'] = $path;
$_SERVER['SCRIPT_FILENAME'] = $file;
chdir(dirname($file));
require $file;
return true;
